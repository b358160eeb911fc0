package io.tidemark.cli.internal;

import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.ParameterException;
import picocli.CommandLine.Spec;

import javax.sql.DataSource;
import java.io.Console;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.SQLException;
import java.util.Properties;

/**
 * {@code --url} and {@code --user}. The password is never taken from the command line, where it would stay in the
 * shell's history and show in the process list: it comes from the environment variable {@value #PASSWORD_VARIABLE},
 * or, when that is not set and the server asks for one, from a prompt on the terminal.
 */
public final class ConnectionOptions {

    static final String PASSWORD_VARIABLE = "TIDEMARK_PASSWORD";

    /** {@code password=} as a URL parameter (PostgreSQL's {@code ?password=}, SQL Server's {@code ;password=}). */
    private static final java.util.regex.Pattern PASSWORD_IN_URL =
            java.util.regex.Pattern.compile("[?&;]password=", java.util.regex.Pattern.CASE_INSENSITIVE);

    @Spec(Spec.Target.MIXEE)
    CommandSpec command;

    @Option(names = "--url", paramLabel = "JDBC-URL",
            description = "The database: jdbc:postgresql://host:5432/db or jdbc:sqlserver://host:1433;databaseName=db.")
    String url;

    @Option(names = "--user", paramLabel = "USER", description = "The login. The password comes from "
            + PASSWORD_VARIABLE + " or a prompt, never from the command line.")
    String user;

    /** Only to refuse it with the reason; hidden from the help. */
    @Option(names = {"--password", "-p"}, hidden = true, arity = "0..1")
    void password(String ignored) {
        throw new ParameterException(command.commandLine(), "Refusing --password: a password on the command line stays"
                + " in the shell's history and shows in the process list. Set the environment variable "
                + PASSWORD_VARIABLE + ", or leave it unset to be prompted.");
    }

    boolean given() {
        return url != null;
    }

    /** The database at {@code --url}, connected once to check it can be reached (exit code 3 when not). */
    DataSource connect() {
        if (url == null) {
            throw new ParameterException(command.commandLine(), "Missing option --url: the command needs a database");
        }
        if (!url.startsWith("jdbc:postgresql:") && !url.startsWith("jdbc:sqlserver:")) {
            throw new ParameterException(command.commandLine(), "--url " + url + " is not a PostgreSQL or SQL Server"
                    + " JDBC URL: jdbc:postgresql://host:5432/db or jdbc:sqlserver://host:1433;databaseName=db");
        }
        if (PASSWORD_IN_URL.matcher(url).find()) {
            // Refused, not masked: the URL is on the command line, in the shell's history and the process list.
            throw new ParameterException(command.commandLine(), "Refusing a password in --url: a password on the"
                    + " command line stays in the shell's history and shows in the process list. Remove it from the"
                    + " URL and set the environment variable " + PASSWORD_VARIABLE + ", or leave it unset to be"
                    + " prompted.");
        }
        String password = System.getenv(PASSWORD_VARIABLE);
        try {
            return probe(password);
        } catch (SQLException e) {
            Console console = System.console();
            if (password == null && console != null && asksForPassword(e)) {
                char[] typed = console.readPassword("Password for %s at %s: ", user == null ? "(default user)" : user,
                        url);
                try {
                    return probe(typed == null ? "" : new String(typed));
                } catch (SQLException again) {
                    throw cannotConnect(again);
                }
            }
            throw cannotConnect(e);
        }
    }

    /** PostgreSQL only, for the commands that read or install PostgreSQL objects. */
    DataSource connectPostgres() {
        if (url != null && !url.startsWith("jdbc:postgresql:")) {
            throw new ParameterException(command.commandLine(), "this command works on PostgreSQL:"
                    + " --url must start with jdbc:postgresql:");
        }
        return connect();
    }

    private DataSource probe(String password) throws SQLException {
        DataSource dataSource = new UrlDataSource(url, user, password);
        try (Connection ignored = dataSource.getConnection()) {
            return dataSource;
        }
    }

    private CannotConnect cannotConnect(SQLException e) {
        return new CannotConnect(url + (user == null ? "" : " as " + user) + ": " + e.getMessage()
                + (e.getSQLState() == null ? "" : " (SQLState " + e.getSQLState() + ")"), e);
    }

    /** The server wants a password and none was given (PostgreSQL and SQL Server word it differently). */
    private static boolean asksForPassword(SQLException e) {
        String message = String.valueOf(e.getMessage()).toLowerCase(java.util.Locale.ROOT);
        return message.contains("no password was provided") || message.contains("password authentication failed")
                || "28000".equals(e.getSQLState()) || "28P01".equals(e.getSQLState());
    }

    /** A data source over {@link DriverManager}: the tool opens a few connections, one at a time; no pool. */
    private record UrlDataSource(String url, String user, String password) implements DataSource {

        @Override
        public Connection getConnection() throws SQLException {
            Properties properties = new Properties();
            if (user != null) {
                properties.setProperty("user", user);
            }
            if (password != null) {
                properties.setProperty("password", password);
            }
            return DriverManager.getConnection(url, properties);
        }

        @Override
        public Connection getConnection(String username, String pass) throws SQLException {
            return DriverManager.getConnection(url, username, pass);
        }

        @Override
        public java.io.PrintWriter getLogWriter() {
            return null;
        }

        @Override
        public void setLogWriter(java.io.PrintWriter out) {
        }

        @Override
        public void setLoginTimeout(int seconds) {
        }

        @Override
        public int getLoginTimeout() {
            return 0;
        }

        @Override
        public java.util.logging.Logger getParentLogger() {
            return java.util.logging.Logger.getLogger("io.tidemark.cli");
        }

        @Override
        public <T> T unwrap(Class<T> type) throws SQLException {
            throw new SQLException("not a wrapper");
        }

        @Override
        public boolean isWrapperFor(Class<?> type) {
            return false;
        }

        @Override
        public String toString() {
            return url;
        }
    }
}
