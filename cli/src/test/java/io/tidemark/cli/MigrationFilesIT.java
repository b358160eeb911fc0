package io.tidemark.cli;

import io.tidemark.history.TemporalTable;
import io.tidemark.postgres.PostgresLogicalCapture;
import io.tidemark.postgres.PostgresOutbox;
import io.tidemark.sqlserver.ChangeProcedureGenerator;
import io.tidemark.sqlserver.ChangeTrackingSetup;
import io.tidemark.testing.EmbeddedPostgresTest;
import io.tidemark.testing.TestDatabase;
import liquibase.Contexts;
import liquibase.LabelExpression;
import liquibase.Liquibase;
import liquibase.database.Database;
import liquibase.database.DatabaseFactory;
import liquibase.database.jvm.JdbcConnection;
import liquibase.resource.DirectoryResourceAccessor;
import org.flywaydb.core.Flyway;
import org.flywaydb.core.api.output.MigrateResult;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.ResultSet;
import java.sql.Statement;
import java.util.stream.Stream;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/**
 * --flyway and --liquibase write migration files that a real Flyway and a real Liquibase run apply: afterwards the
 * database holds what the API installs (verify finds nothing) and it works.
 */
@EmbeddedPostgresTest
class MigrationFilesIT {

    @Test
    void flyway_applies_the_outbox_and_the_history_in_order(TestDatabase database, @TempDir Path dir)
            throws Exception {
        database.execute("CREATE TABLE public.orders (id bigint PRIMARY KEY, status text); INSERT INTO public.orders"
                + " VALUES (1, 'new'), (2, 'paid')");
        String url = database.jdbcUrl();

        Cli.Run outbox = Cli.run("outbox", "script", "orders", "--url", url, "--flyway", dir.toString());
        Cli.Run history = Cli.run("history", "script", "orders", "--url", url, "--flyway", dir.toString());

        assertThat(outbox.exit()).as(outbox.toString()).isZero();
        assertThat(history.exit()).as(history.toString()).isZero();
        Path first = dir.resolve("V1__tidemark_outbox_public_orders.sql");
        Path second = dir.resolve("V2__tidemark_history_public_orders.sql");
        assertThat(outbox.stdout().strip()).isEqualTo(first.toString());
        assertThat(history.stdout().strip()).isEqualTo(second.toString());
        assertThat(Files.readString(first)).as("the file is the API's script")
                .isEqualTo(PostgresOutbox.forTable("orders").build().script(database.dataSource()));
        assertThat(Files.readString(second))
                .isEqualTo(TemporalTable.forTable("orders").build().script(database.dataSource()));

        MigrateResult result = Flyway.configure().dataSource(database.dataSource()).locations("filesystem:" + dir)
                .baselineOnMigrate(true).baselineVersion("0") // the tables existed before Flyway came
                .load().migrate();

        assertThat(result.migrationsExecuted).isEqualTo(2);
        assertThat(PostgresOutbox.forTable("orders").build().differences(database.dataSource())).isEmpty();
        assertThat(TemporalTable.forTable("orders").build().verify(database.dataSource()).drifts()).isEmpty();
        database.execute("UPDATE public.orders SET status = 'shipped' WHERE id = 2");
        assertThat(count(database, "SELECT count(*) FROM public.orders_history WHERE id = 2")).isEqualTo(2);
        assertThat(count(database, "SELECT count(*) FROM public.orders_outbox")).isEqualTo(1);
        assertThat(Cli.run("history", "verify", "orders", "--url", url).exit()).isZero();
    }

    @Test
    void flyway_versions_are_given_or_follow_the_highest_and_never_clash(@TempDir Path dir) throws IOException {
        Files.writeString(dir.resolve("V7_1__earlier.sql"), "SELECT 1;");
        String[] script = {"sqlserver", "procedure", "dbo.Items", "--key", "Id", "--flyway", dir.toString()};

        Cli.Run derived = Cli.run(script);
        assertThat(derived.exit()).as(derived.toString()).isZero();
        assertThat(dir.resolve("V8__tidemark_sqlserver_procedure_dbo_items_changes.sql")).exists();

        Cli.Run given = Cli.run(concat(script, "--flyway-version", "10.2"));
        assertThat(given.exit()).as(given.toString()).isZero();
        assertThat(dir.resolve("V10.2__tidemark_sqlserver_procedure_dbo_items_changes.sql")).exists();

        Cli.Run clash = Cli.run(concat(script, "--flyway-version", "8.0"));
        assertThat(clash.exit()).as(clash.toString()).isEqualTo(ExitCode.USAGE);
        assertThat(clash.stderr()).contains("Flyway version 8.0 is taken by").contains("V8__");

        Cli.Run malformed = Cli.run(concat(script, "--flyway-version", "v3"));
        assertThat(malformed.exit()).isEqualTo(ExitCode.USAGE);
        assertThat(malformed.stderr()).contains("is not a Flyway version");

        Cli.Run both = Cli.run(concat(script, "--liquibase", dir.toString()));
        assertThat(both.exit()).isEqualTo(ExitCode.USAGE);
        assertThat(both.stderr()).contains("--flyway and --liquibase exclude each other");
    }

    @Test
    void the_sql_server_setup_runs_outside_a_transaction_in_flyway(@TempDir Path dir) throws IOException {
        Cli.Run run = Cli.run("sqlserver", "setup", "dbo.Items", "--flyway", dir.toString());

        assertThat(run.exit()).as(run.toString()).isZero();
        Path file = dir.resolve("V1__tidemark_sqlserver_change_tracking.sql");
        assertThat(Files.readString(file)).isEqualTo(ChangeTrackingSetup.builder().table("dbo.Items").build().script());
        assertThat(Files.readString(dir.resolve(file.getFileName() + ".conf"))).isEqualTo("executeInTransaction=false\n");
    }

    @Test
    @SuppressWarnings("deprecation") // Liquibase(String, ResourceAccessor, Database): the shortest complete update
    void liquibase_applies_the_history_changelog(TestDatabase database, @TempDir Path dir) throws Exception {
        database.execute("CREATE TABLE public.accounts (id int PRIMARY KEY, balance numeric);"
                + " INSERT INTO public.accounts SELECT g, g FROM generate_series(1, 50) g");

        Cli.Run run = Cli.run("history", "script", "accounts", "--url", database.jdbcUrl(), "--liquibase",
                dir.toString(), "--changeset-author", "dba");

        assertThat(run.exit()).as(run.toString()).isZero();
        Path file = dir.resolve("tidemark_history_public.accounts.sql");
        assertThat(run.stdout().strip()).isEqualTo(file.toString());
        String script = TemporalTable.forTable("accounts").build().script(database.dataSource());
        assertThat(Files.readString(file, StandardCharsets.UTF_8)).isEqualTo("--liquibase formatted sql\n\n"
                + "--changeset dba:tidemark_history_public.accounts splitStatements:false stripComments:false\n"
                + "--comment: generated by the tidemark command; do not edit (the checksum guards it)\n" + script);

        try (Connection c = database.dataSource().getConnection()) {
            Database db = DatabaseFactory.getInstance().findCorrectDatabaseImplementation(new JdbcConnection(c));
            try (Liquibase liquibase = new Liquibase(file.getFileName().toString(), new DirectoryResourceAccessor(dir),
                    db)) {
                liquibase.update(new Contexts(), new LabelExpression());
            }
        }

        assertThat(TemporalTable.forTable("accounts").build().verify(database.dataSource()).drifts())
                .as("the function bodies arrive whole: their comments too (Liquibase strips comments unless told not to)")
                .isEmpty();
        assertThat(count(database, "SELECT count(*) FROM public.accounts_history")).isEqualTo(50);
        assertThat(count(database, "SELECT count(*) FROM public.databasechangelog WHERE author = 'dba'")).isEqualTo(1);
    }

    @Test
    void a_t_sql_changelog_is_split_at_its_go_lines(@TempDir Path dir) throws IOException {
        Cli.Run run = Cli.run("sqlserver", "procedure", "dbo.Items", "--key", "Id", "--liquibase", dir.toString());

        assertThat(run.exit()).as(run.toString()).isZero();
        try (Stream<Path> files = Files.list(dir)) {
            assertThat(files.map(p -> p.getFileName().toString()))
                    .containsExactly("tidemark_sqlserver_procedure_dbo.Items_changes.sql");
        }
        assertThat(Files.readString(dir.resolve("tidemark_sqlserver_procedure_dbo.Items_changes.sql")))
                .startsWith("--liquibase formatted sql\n\n--changeset tidemark:tidemark_sqlserver_procedure_dbo.Items_changes"
                        + " splitStatements:true endDelimiter:GO stripComments:false\n")
                .endsWith(ChangeProcedureGenerator.forTable("dbo.Items").keyColumns("Id").build().script());
    }

    @Test
    @SuppressWarnings("deprecation") // Liquibase(String, ResourceAccessor, Database): the shortest complete update
    void the_logical_capture_is_refused_since_neither_tool_can_create_its_slot(TestDatabase database, @TempDir Path dir)
            throws Exception {
        database.execute("CREATE TABLE public.pallets (id int PRIMARY KEY)");
        PostgresLogicalCapture capture = PostgresLogicalCapture.forTables("pallets")
                .slot("tm_cli_migration_" + ProcessHandle.current().pid()).build();
        String refused = "cannot create logical replication slot in transaction that has performed writes";
        try {
            for (String tool : new String[] {"--flyway", "--liquibase"}) {
                Cli.Run run = Cli.run("logical", "script", "pallets", "--slot", capture.slot(), tool, dir.toString());
                assertThat(run.exit()).as(run.toString()).isEqualTo(ExitCode.USAGE);
                assertThat(run.stderr()).contains("logical script writes no migration file", "psql");
            }
            assertThat(dir).isEmptyDirectory();

            // Why: each tool runs the script in one transaction, where the publication's write comes first.
            Path flyway = Files.createDirectory(dir.resolve("flyway"));
            Files.writeString(flyway.resolve("V1__tidemark_logical.sql"), capture.script());
            assertThatThrownBy(() -> Flyway.configure().dataSource(database.dataSource())
                    .locations("filesystem:" + flyway).table("flyway_logical_history") // not the other tests'
                    .baselineOnMigrate(true).baselineVersion("0").load().migrate())
                    .hasStackTraceContaining(refused);
            Files.writeString(dir.resolve("logical.sql"), "--liquibase formatted sql\n\n--changeset tidemark:logical"
                    + " splitStatements:false stripComments:false\n" + capture.script());
            try (Connection c = database.dataSource().getConnection()) {
                Database db = DatabaseFactory.getInstance().findCorrectDatabaseImplementation(new JdbcConnection(c));
                try (Liquibase liquibase = new Liquibase("logical.sql", new DirectoryResourceAccessor(dir), db)) {
                    assertThatThrownBy(() -> liquibase.update(new Contexts(), new LabelExpression()))
                            .hasStackTraceContaining(refused);
                }
            }
            assertThat(count(database, "SELECT count(*) FROM pg_publication WHERE pubname = '" + capture.publication()
                    + "'")).as("both rolled the publication back").isZero();
        } finally {
            capture.uninstall(database.dataSource());
        }
    }

    private static String[] concat(String[] a, String... b) {
        return Stream.concat(Stream.of(a), Stream.of(b)).toArray(String[]::new);
    }

    private static long count(TestDatabase database, String sql) throws Exception {
        try (Connection c = database.dataSource().getConnection(); Statement s = c.createStatement();
             ResultSet rs = s.executeQuery(sql)) {
            rs.next();
            return rs.getLong(1);
        }
    }
}
