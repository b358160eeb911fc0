package io.tidemark.cli;

import io.tidemark.history.TemporalTable;
import io.tidemark.testing.EmbeddedPostgresTest;
import io.tidemark.testing.TestDatabase;
import org.junit.jupiter.api.Test;

import java.sql.Connection;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.List;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

import static org.assertj.core.api.Assertions.assertThat;

/** history install (with its progress, on 1,000,000 rows), verify, evolve, prune and uninstall from the command line. */
@EmbeddedPostgresTest
class HistoryCommandIT {

    private static final Pattern PROGRESS = Pattern.compile("seeding public\\.(\\w+): (\\d+) of (\\d+) rows \\((\\d+)%\\)");

    /** About 20 s on the shared, loaded build machine (the install itself; filling the table comes first). */
    @Test
    void install_on_1_000_000_rows_shows_progress_and_completes(TestDatabase database) throws SQLException {
        String table = "million";
        int rows = 1_000_000;
        database.execute("CREATE TABLE public." + table + " (id bigint PRIMARY KEY, name text NOT NULL, amount numeric);"
                + " INSERT INTO public." + table + " SELECT g, 'row ' || g, g / 100.0 FROM generate_series(1, " + rows
                + ") g; ANALYZE public." + table);

        long started = System.nanoTime();
        Cli.Run run = Cli.run("history", "install", table, "--url", database.jdbcUrl());
        long seconds = (System.nanoTime() - started) / 1_000_000_000;

        assertThat(run.exit()).as(run.toString()).isZero();
        assertThat(run.stdout()).isEqualTo("history of public." + table + " installed: " + rows
                + " rows seeded into public." + table + "_history" + System.lineSeparator());
        List<long[]> reports = run.stderr().lines().map(PROGRESS::matcher).filter(Matcher::matches)
                .map(m -> new long[] {Long.parseLong(m.group(2)), Long.parseLong(m.group(3))}).toList();
        assertThat(reports).as("progress lines in\n%s", run.stderr()).hasSizeGreaterThan(2);
        assertThat(reports).allSatisfy(r -> assertThat(r[1]).isEqualTo(rows));
        assertThat(reports.get(0)[0]).isZero();
        assertThat(reports.get(reports.size() - 1)[0]).isEqualTo(rows);
        assertThat(reports).extracting(r -> r[0]).isSorted();
        assertThat(count(database, "SELECT count(*) FROM public." + table + "_history WHERE valid_to = 'infinity'"))
                .isEqualTo(rows);
        assertThat(TemporalTable.forTable(table).build().verify(database.dataSource()).isClean()).isTrue();
        System.out.printf("history install of %,d rows from the command line: %d s%n", rows, seconds);
    }

    @Test
    void migrate_between_the_storage_shapes_and_back(TestDatabase database) throws SQLException {
        database.execute("CREATE TABLE public.shapes (id int PRIMARY KEY, premium numeric);"
                + " INSERT INTO public.shapes VALUES (1, 10), (2, 20)");
        String url = database.jdbcUrl();
        assertThat(Cli.run("history", "install", "shapes", "--url", url).exit()).isZero();
        database.execute("UPDATE public.shapes SET premium = premium + 1 WHERE id = 1");

        Cli.Run refused = Cli.run("history", "install", "shapes", "--storage", "CURRENT_IN_TABLE", "--url", url);
        assertThat(refused.exit()).as(refused.toString()).isNotZero();
        assertThat(refused.stderr()).contains("run migrate()");

        Cli.Run script = Cli.run("history", "migrate", "shapes", "--storage", "CURRENT_IN_TABLE", "--script", "--url", url);
        assertThat(script.exit()).as(script.toString()).isZero();
        assertThat(script.stdout()).startsWith("-- Tidemark: migrate the history of public.shapes from storage"
                + " HISTORY_TABLE to CURRENT_IN_TABLE").contains("LOCK TABLE", "CREATE VIEW");
        assertThat(count(database, "SELECT count(*) FROM pg_class WHERE relname = 'shapes_history_closed'"))
                .as("printing the script changes nothing").isZero();

        Cli.Run migrate = Cli.run("history", "migrate", "shapes", "--storage", "CURRENT_IN_TABLE", "--url", url);
        assertThat(migrate.exit()).as(migrate.toString()).isZero();
        assertThat(migrate.stdout()).contains("migrated to CURRENT_IN_TABLE", "copied 1 closed versions",
                "moved 2 open versions");
        assertThat(Cli.run("history", "verify", "shapes", "--storage", "CURRENT_IN_TABLE", "--url", url).exit())
                .isZero();
        Cli.Run again = Cli.run("history", "migrate", "shapes", "--storage", "CURRENT_IN_TABLE", "--url", url);
        assertThat(again.stdout()).contains("already; nothing to migrate");

        Cli.Run implied = Cli.run("history", "migrate", "shapes", "--url", url);
        assertThat(implied.exit()).as("the target is never implied").isEqualTo(ExitCode.USAGE);
        assertThat(implied.stderr()).contains("Missing option --storage");
        Cli.Run back = Cli.run("history", "migrate", "shapes", "--storage", "HISTORY_TABLE", "--url", url);
        assertThat(back.exit()).as(back.toString()).isZero();
        assertThat(back.stdout()).contains("migrated to HISTORY_TABLE");
        assertThat(Cli.run("history", "verify", "shapes", "--url", url).exit()).isZero();
        assertThat(count(database, "SELECT count(*) FROM public.shapes_history")).isEqualTo(3);
    }

    @Test
    void verify_evolve_prune_uninstall(TestDatabase database) throws SQLException {
        database.execute("CREATE TABLE public.policies (id int PRIMARY KEY, premium numeric);"
                + " INSERT INTO public.policies VALUES (1, 10), (2, 20)");
        String url = database.jdbcUrl();
        assertThat(Cli.run("history", "install", "policies", "--url", url).exit()).isZero();

        Cli.Run clean = Cli.run("history", "verify", "policies", "--url", url);
        assertThat(clean.exit()).as(clean.toString()).isZero();
        assertThat(clean.stdout()).contains("no drift");

        database.execute("ALTER TABLE public.policies ADD COLUMN holder text");
        Cli.Run drift = Cli.run("history", "verify", "policies", "--url", url);
        assertThat(drift.exit()).as(drift.toString()).isEqualTo(ExitCode.FINDING);
        assertThat(drift.stdout()).contains("holder");
        assertThat(drift.stderr()).contains("tidemark history evolve repairs it");

        Cli.Run evolve = Cli.run("history", "evolve", "policies", "--url", url);
        assertThat(evolve.exit()).as(evolve.toString()).isZero();
        assertThat(evolve.stdout()).contains("holder");
        assertThat(Cli.run("history", "verify", "policies", "--url", url).exit()).isZero();

        database.execute("UPDATE public.policies SET premium = premium + 1");
        Cli.Run prune = Cli.run("history", "prune", "policies", "--before", "2999-01-01T00:00:00Z", "--url", url);
        assertThat(prune.exit()).as(prune.toString()).isZero();
        assertThat(prune.stdout()).contains("2 versions deleted");

        Cli.Run noCutoff = Cli.run("history", "prune", "policies", "--url", url);
        assertThat(noCutoff.exit()).as(noCutoff.toString()).isEqualTo(ExitCode.USAGE);
        assertThat(noCutoff.stderr()).contains("--before INSTANT or --retention DURATION");

        Cli.Run uninstall = Cli.run("history", "uninstall", "policies", "--url", url);
        assertThat(uninstall.exit()).as(uninstall.toString()).isZero();
        assertThat(uninstall.stdout()).contains("public.policies_history is kept");
        assertThat(count(database, "SELECT count(*) FROM pg_trigger WHERE tgrelid = 'public.policies'::regclass"
                + " AND NOT tgisinternal")).isZero();
    }

    @Test
    void what_the_database_refuses_exits_4_naming_the_table(TestDatabase database) {
        database.execute("CREATE TABLE public.keyless (a int);"
                + " CREATE TABLE public.retyped (id int PRIMARY KEY, amount int)");
        String url = database.jdbcUrl();

        Cli.Run keyless = Cli.run("history", "install", "keyless", "--url", url);
        assertThat(keyless.exit()).as(keyless.toString()).isEqualTo(ExitCode.FAILED);
        assertThat(keyless.stderr()).contains("public.keyless");

        Cli.Run missing = Cli.run("history", "script", "no_such_table", "--url", url);
        assertThat(missing.exit()).as(missing.toString()).isEqualTo(ExitCode.FAILED);
        assertThat(missing.stderr()).contains("no_such_table");
        assertThat(missing.stdout()).isEmpty();

        assertThat(Cli.run("history", "install", "retyped", "--url", url).exit()).isZero();
        database.execute("ALTER TABLE public.retyped ALTER COLUMN amount TYPE text");
        Cli.Run evolve = Cli.run("history", "evolve", "retyped", "--url", url);
        assertThat(evolve.exit()).as(evolve.toString()).isEqualTo(ExitCode.FAILED);
        assertThat(evolve.stderr()).contains("SCHEMA_CHANGE_REFUSED").contains("amount");
    }

    private static long count(TestDatabase database, String sql) throws SQLException {
        try (Connection c = database.dataSource().getConnection(); Statement s = c.createStatement();
             ResultSet rs = s.executeQuery(sql)) {
            rs.next();
            return rs.getLong(1);
        }
    }
}
