package io.tidemark.cli;

import io.tidemark.testing.EmbeddedPostgresTest;
import io.tidemark.testing.TestDatabase;
import org.junit.jupiter.api.Test;

import java.util.Map;

import static org.assertj.core.api.Assertions.assertThat;

/** The jar runs, knows its version, prints help, and maps usage and connection problems to their exit codes. */
@EmbeddedPostgresTest
class UsageIT {

    @Test
    void version_and_help() {
        Cli.Run version = Cli.run("--version");
        assertThat(version.exit()).isZero();
        assertThat(version.stdout()).startsWith("tidemark 0.1.0-SNAPSHOT");

        Cli.Run help = Cli.run("--help");
        assertThat(help.exit()).isZero();
        assertThat(help.stdout()).contains("outbox", "logical", "history", "sqlserver", "verify-contract", "status",
                "pause", "resume", "reset", "Exit codes:");

        Cli.Run subcommandHelp = Cli.run("history", "install", "--help");
        assertThat(subcommandHelp.exit()).isZero();
        assertThat(subcommandHelp.stdout()).startsWith("Usage: tidemark history install").contains("--url");
    }

    @Test
    void usage_errors_exit_2() {
        for (String[] args : new String[][] {{}, {"history"}, {"outbox", "frobnicate"}, {"status", "--bogus"},
                {"history", "install"}, {"logical"},
                {"logical", "status", "--url", "jdbc:postgresql://localhost/db"}}) {
            Cli.Run run = Cli.run(args);
            assertThat(run.exit()).as(String.join(" ", args) + "\n" + run).isEqualTo(ExitCode.USAGE);
            assertThat(run.stderr()).isNotBlank();
        }
    }

    @Test
    void a_password_on_the_command_line_is_refused() {
        Cli.Run run = Cli.run("status", "--url", "jdbc:postgresql://localhost/db", "--password", "secret");

        assertThat(run.exit()).isEqualTo(ExitCode.USAGE);
        assertThat(run.stderr()).contains("Refusing --password").contains("TIDEMARK_PASSWORD")
                .doesNotContain("secret");
    }

    @Test
    void a_password_in_the_url_is_refused_and_never_printed() {
        for (String url : new String[] {"jdbc:postgresql://localhost/db?user=u&password=s3cr3t",
                "jdbc:sqlserver://localhost:1433;databaseName=db;Password=s3cr3t"}) {
            Cli.Run run = Cli.run("status", "--url", url);
            assertThat(run.exit()).as(url).isEqualTo(ExitCode.USAGE);
            assertThat(run.stderr()).contains("Refusing a password in --url").contains("TIDEMARK_PASSWORD")
                    .doesNotContain("s3cr3t");
        }
    }

    @Test
    void the_url_must_be_given_and_be_a_jdbc_url() {
        Cli.Run missing = Cli.run("status");
        assertThat(missing.exit()).isEqualTo(ExitCode.USAGE);
        assertThat(missing.stderr()).contains("Missing option --url");

        Cli.Run wrong = Cli.run("status", "--url", "postgres://localhost/db");
        assertThat(wrong.exit()).isEqualTo(ExitCode.USAGE);
        assertThat(wrong.stderr()).contains("is not a PostgreSQL or SQL Server JDBC URL");

        Cli.Run sqlServerForHistory = Cli.run("history", "install", "t", "--url", "jdbc:sqlserver://localhost:1");
        assertThat(sqlServerForHistory.exit()).isEqualTo(ExitCode.USAGE);
        assertThat(sqlServerForHistory.stderr()).contains("this command works on PostgreSQL");

        Cli.Run urlWithoutApply = Cli.run("sqlserver", "role", "r", "--table", "dbo.Items", "--url",
                "jdbc:sqlserver://localhost:1");
        assertThat(urlWithoutApply.exit()).isEqualTo(ExitCode.USAGE);
        assertThat(urlWithoutApply.stderr()).contains("--url is only used with --apply");

        Cli.Run postgresForApply = Cli.run("sqlserver", "role", "r", "--table", "dbo.Items", "--apply",
                "--url", "jdbc:postgresql://localhost/db");
        assertThat(postgresForApply.exit()).isEqualTo(ExitCode.USAGE);
        assertThat(postgresForApply.stderr()).contains("--apply needs a SQL Server database");
    }

    @Test
    void an_unreachable_database_exits_3_naming_it(TestDatabase database) {
        Cli.Run refused = Cli.run("status", "--url", "jdbc:postgresql://127.0.0.1:1/nowhere");
        assertThat(refused.exit()).as(refused.toString()).isEqualTo(ExitCode.CANNOT_CONNECT);
        assertThat(refused.stderr()).contains("cannot connect: jdbc:postgresql://127.0.0.1:1/nowhere");

        String noDatabase = database.jdbcUrl().replace("/" + database.name(), "/no_such_database");
        Cli.Run missing = Cli.run("history", "verify", "t", "--url", noDatabase);
        assertThat(missing.exit()).as(missing.toString()).isEqualTo(ExitCode.CANNOT_CONNECT);
        assertThat(missing.stderr()).contains("no_such_database");

        String withoutUser = database.jdbcUrl().replaceFirst("\\?.*", "");
        Cli.Run noLogin = Cli.run(Map.of("TIDEMARK_PASSWORD", "not-shown"), "status", "--url", withoutUser,
                "--user", "no_such_role");
        assertThat(noLogin.exit()).as(noLogin.toString()).isEqualTo(ExitCode.CANNOT_CONNECT);
        assertThat(noLogin.stderr()).contains("as no_such_role").doesNotContain("not-shown");

        Cli.Run sqlServer = Cli.run("sqlserver", "procedure", "dbo.Items", "--key", "Id", "--apply", "--url",
                "jdbc:sqlserver://127.0.0.1:1;databaseName=x;loginTimeout=2");
        assertThat(sqlServer.exit()).as(sqlServer.toString()).isEqualTo(ExitCode.CANNOT_CONNECT);
    }
}
