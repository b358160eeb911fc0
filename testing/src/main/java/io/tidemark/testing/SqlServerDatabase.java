package io.tidemark.testing;

import io.tidemark.sync.internal.sql.SqlServerName;
import io.tidemark.sync.internal.sql.SqlTemplate;

import javax.sql.DataSource;
import java.util.ArrayList;
import java.util.List;
import java.util.UUID;

/**
 * One database of the SQL Server container, owned by one test class. Connects as {@code sa};
 * {@link #createLogin(String)} gives a data source for an ordinary login, to prove that something works with
 * least privilege.
 */
public final class SqlServerDatabase extends OwnedDatabase {

    private final SqlServerContainerServer server;
    private final List<String> logins = new ArrayList<>();

    SqlServerDatabase(SqlServerContainerServer server, String name) {
        super(name, server.adminDataSourceFor(name));
        this.server = server;
    }

    /** {@code jdbc:sqlserver://host:port;databaseName=<name>;encrypt=false}, without credentials. */
    public String jdbcUrl() {
        return server.jdbcUrl(name());
    }

    /** Runs one batch (no {@code GO} separators) as {@code sa} in this database. */
    public void execute(String sql) {
        SqlServerContainerServer.execute(dataSource(), sql);
    }

    /**
     * Creates a SQL login with a generated password and a user for it in this database, with no permission at all,
     * and returns a data source connecting as it. Grant what the test needs to {@code user} (same name). Logins
     * belong to the server: use names unique to the test. Dropped with the database.
     */
    public synchronized DataSource createLogin(String user) {
        SqlServerName.checkPart(user, "login");
        String password = "Tm-" + UUID.randomUUID() + "-aA1!";
        String quoted = SqlServerName.quote(user);
        SqlServerContainerServer.execute(server.adminDataSource(), SqlTemplate.of("""
                CREATE LOGIN {{login}} WITH PASSWORD = {{password}}, CHECK_POLICY = OFF, DEFAULT_DATABASE = {{database}}""")
                .with("login", quoted)
                .with("password", SqlServerName.literal(password))
                .with("database", SqlServerName.quote(name()))
                .render());
        logins.add(user);
        execute(SqlTemplate.of("CREATE USER {{user}} FOR LOGIN {{user}}").with("user", quoted).render());
        return server.dataSource(user, password, name());
    }

    /** Drops the database, ending its remaining connections first, and the logins created for it. */
    @Override
    public synchronized void close() {
        String quoted = SqlServerName.quote(name());
        SqlServerContainerServer.execute(server.adminDataSource(), SqlTemplate.of("""
                IF DB_ID({{name}}) IS NOT NULL BEGIN
                    ALTER DATABASE {{database}} SET SINGLE_USER WITH ROLLBACK IMMEDIATE;
                    DROP DATABASE {{database}};
                END""")
                .with("name", SqlServerName.literal(name()))
                .with("database", quoted)
                .render());
        for (String login : logins) {
            SqlServerContainerServer.execute(server.adminDataSource(), SqlTemplate.of(
                            "IF SUSER_ID({{name}}) IS NOT NULL DROP LOGIN {{login}}")
                    .with("name", SqlServerName.literal(login))
                    .with("login", SqlServerName.quote(login))
                    .render());
        }
        logins.clear();
    }

    @Override
    public String toString() {
        return "SqlServerDatabase[" + name() + "]";
    }
}
