package io.tidemark.cli;

import io.tidemark.postgres.PostgresLogicalCapture;
import io.tidemark.testing.EmbeddedPostgresServer;
import io.tidemark.testing.EmbeddedPostgresTest;
import io.tidemark.testing.TestDatabase;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * logical install, status and uninstall against a live database, with their exit codes. Slot names belong to the
 * whole server, which other test classes share: each test names its own and drops it afterwards, since a slot keeps
 * WAL for as long as it exists.
 */
@EmbeddedPostgresTest
class LogicalCommandIT {

    private static final AtomicInteger SLOTS = new AtomicInteger();
    private static final Pattern RETAINED =
            Pattern.compile("WAL retained: +\\d+ (?:bytes|kB|MB|GB) \\((\\d+) bytes\\)");

    private final TestDatabase database;
    private final List<String> slots = new ArrayList<>();

    LogicalCommandIT(TestDatabase database) {
        this.database = database;
    }

    @AfterEach
    void dropSlots() {
        for (String slot : slots) {
            // uninstall drops the slot and the publication by name; the builder wants a table all the same
            PostgresLogicalCapture.forTables("unused").slot(slot).build().uninstall(database.dataSource());
        }
    }

    private String slot() {
        String slot = "tm_cli_" + ProcessHandle.current().pid() + "_" + SLOTS.incrementAndGet();
        slots.add(slot);
        return slot;
    }

    @Test
    void install_status_uninstall() throws SQLException {
        database.execute("CREATE TABLE public.stock (id bigint PRIMARY KEY, quantity int); CREATE SCHEMA shipping;"
                + " CREATE TABLE shipping.parcels (id bigint PRIMARY KEY, weight numeric)");
        String slot = slot();
        String url = database.jdbcUrl();

        Cli.Run install = Cli.run("logical", "install", "stock", "shipping.parcels", "--slot", slot, "--url", url);
        assertThat(install.exit()).as(install.toString()).isZero();
        assertThat(install.stdout()).isEqualTo("logical capture installed: slot " + slot + ", publication " + slot
                + " of public.stock, shipping.parcels" + System.lineSeparator());
        assertThat(query("SELECT plugin FROM pg_replication_slots WHERE slot_name = ?", slot))
                .containsExactly("pgoutput");

        Cli.Run again = Cli.run("logical", "install", "stock", "shipping.parcels", "--slot", slot, "--url", url);
        assertThat(again.exit()).as("install is idempotent\n" + again).isZero();
        assertThat(query("SELECT slot_name FROM pg_replication_slots WHERE slot_name = ?", slot)).hasSize(1);

        Cli.Run status = Cli.run("logical", "status", "stock", "shipping.parcels", "--slot", slot, "--url", url);
        assertThat(status.exit()).as(status.toString()).isZero();
        assertThat(status.stdout()).contains(
                "wal_level:            logical",
                "publication:          " + slot + System.lineSeparator(),
                "published tables:     public.stock, shipping.parcels",
                "slot:                 " + slot + ", plugin pgoutput, database " + database.name(),
                "active:               no",
                "confirmed_flush_lsn:  " + query("SELECT confirmed_flush_lsn::text FROM pg_replication_slots"
                        + " WHERE slot_name = ?", slot).get(0));
        long before = retained(status);

        database.execute("INSERT INTO public.stock SELECT g, g FROM generate_series(1, 20000) g");
        long after = retained(Cli.run("logical", "status", "stock", "shipping.parcels", "--slot", slot, "--url", url));
        assertThat(after).as("the slot keeps the WAL written since it was created").isGreaterThan(before + 500_000);

        database.createRole("tm_cli_watcher");
        Cli.Run plainRole = Cli.run(Map.of("TIDEMARK_PASSWORD", "pw_tm_cli_watcher"), "logical", "status", "stock",
                "shipping.parcels", "--slot", slot, "--url", url.replaceFirst("\\?.*", ""), "--user", "tm_cli_watcher");
        assertThat(plainRole.exit()).as("status needs no privilege beyond connecting\n" + plainRole).isZero();
        assertThat(plainRole.stdout()).contains("published tables:     public.stock, shipping.parcels");

        Cli.Run uninstall = Cli.run("logical", "uninstall", "stock", "shipping.parcels", "--slot", slot, "--url", url);
        assertThat(uninstall.exit()).as(uninstall.toString()).isZero();
        assertThat(query("SELECT slot_name FROM pg_replication_slots WHERE slot_name = ?", slot)).isEmpty();
        assertThat(query("SELECT pubname FROM pg_publication WHERE pubname = ?", slot)).isEmpty();

        Cli.Run gone = Cli.run("logical", "status", "stock", "--slot", slot, "--url", url);
        assertThat(gone.exit()).as("an uninstalled capture is a finding\n" + gone).isEqualTo(ExitCode.FINDING);
        assertThat(gone.stdout()).contains("publication:          " + slot + ", missing",
                "slot:                 " + slot + ", missing");
        assertThat(gone.stderr()).contains("logical capture " + slot + ": 2 problems");
    }

    @Test
    void status_names_the_tables_the_publication_lacks() {
        database.execute("CREATE TABLE public.bins (id int PRIMARY KEY);"
                + " CREATE TABLE public.racks (id int PRIMARY KEY)");
        String slot = slot();
        String url = database.jdbcUrl();
        assertThat(Cli.run("logical", "install", "bins", "--slot", slot, "--url", url).exit()).isZero();

        Cli.Run status = Cli.run("logical", "status", "bins", "racks", "--slot", slot, "--url", url);

        assertThat(status.exit()).as(status.toString()).isEqualTo(ExitCode.FINDING);
        assertThat(status.stdout()).contains("published tables:     public.bins" + System.lineSeparator())
                .contains("problem: the publication " + slot + " does not publish public.racks");
        assertThat(status.stderr()).contains("1 problem");

        Cli.Run oldRows = Cli.run("logical", "status", "bins", "--old-rows", "--slot", slot, "--url", url);
        assertThat(oldRows.exit()).as(oldRows.toString()).isEqualTo(ExitCode.FINDING);
        assertThat(oldRows.stdout()).contains("problem: REPLICA IDENTITY is not FULL on public.bins:");
        assertThat(Cli.run("logical", "install", "bins", "--old-rows", "--slot", slot, "--url", url).exit()).isZero();
        Cli.Run full = Cli.run("logical", "status", "bins", "--old-rows", "--slot", slot, "--url", url);
        assertThat(full.exit()).as(full.toString()).isZero();
    }

    @Test
    void a_bad_slot_name_is_a_usage_error_naming_it() throws SQLException {
        database.execute("CREATE TABLE public.crates (id int PRIMARY KEY)");

        Cli.Run script = Cli.run("logical", "script", "crates", "--slot", "Bad-Name");
        assertThat(script.exit()).as(script.toString()).isEqualTo(ExitCode.USAGE);
        assertThat(script.stderr()).contains("INVALID_IDENTIFIER: the replication slot name Bad-Name is not valid");
        assertThat(script.stdout()).isEmpty();
        for (String command : new String[] {"install", "status", "uninstall"}) {
            Cli.Run run = Cli.run("logical", command, "crates", "--slot", "Bad-Name", "--url", database.jdbcUrl());
            assertThat(run.exit()).as(command + "\n" + run).isEqualTo(ExitCode.USAGE);
            assertThat(run.stderr()).as(command).contains("INVALID_IDENTIFIER").contains("Bad-Name");
        }
        Cli.Run publication = Cli.run("logical", "install", "crates", "--publication", "Shop", "--url",
                database.jdbcUrl());
        assertThat(publication.exit()).as(publication.toString()).isEqualTo(ExitCode.USAGE);
        assertThat(publication.stderr()).contains("the publication name Shop is not valid");
        assertThat(query("SELECT slot_name FROM pg_replication_slots WHERE database = ?", database.name())).isEmpty();
    }

    @Test
    void a_table_without_a_replica_identity_is_refused_before_any_change() throws SQLException {
        database.execute("CREATE TABLE public.logbook (line text)");
        String slot = slot();

        Cli.Run run = Cli.run("logical", "install", "logbook", "--slot", slot, "--url", database.jdbcUrl());

        assertThat(run.exit()).as(run.toString()).isEqualTo(ExitCode.FAILED);
        assertThat(run.stderr()).contains("SCHEMA_UNSUPPORTED").contains("\"public\".\"logbook\"")
                .contains("no replica identity");
        assertThat(query("SELECT pubname FROM pg_publication WHERE pubname = ?", slot)).isEmpty();
        assertThat(query("SELECT slot_name FROM pg_replication_slots WHERE slot_name = ?", slot)).isEmpty();

        Cli.Run oldRows = Cli.run("logical", "install", "logbook", "--slot", slot, "--old-rows", "--url",
                database.jdbcUrl());
        assertThat(oldRows.exit()).as(oldRows.toString()).isZero();
        assertThat(query("SELECT relreplident::text FROM pg_class WHERE oid = 'public.logbook'::regclass"))
                .containsExactly("f");
    }

    @Test
    void a_slot_of_another_database_is_neither_taken_nor_dropped() throws SQLException {
        database.execute("CREATE TABLE public.trays (id int PRIMARY KEY)");
        String slot = slot();
        assertThat(Cli.run("logical", "install", "trays", "--slot", slot, "--url", database.jdbcUrl()).exit()).isZero();

        try (TestDatabase other = EmbeddedPostgresServer.shared().createDatabase()) {
            other.execute("CREATE TABLE public.trays (id int PRIMARY KEY)");
            String elsewhere = "the replication slot " + slot + " belongs to the database " + database.name()
                    + ", not " + other.name();
            for (String command : new String[] {"install", "uninstall"}) {
                Cli.Run run = Cli.run("logical", command, "trays", "--slot", slot, "--url", other.jdbcUrl());
                assertThat(run.exit()).as(command + "\n" + run).isEqualTo(ExitCode.FAILED);
                assertThat(run.stderr()).as(command).contains("SCHEMA_UNSUPPORTED: " + elsewhere);
            }
            Cli.Run status = Cli.run("logical", "status", "trays", "--slot", slot, "--url", other.jdbcUrl());
            assertThat(status.exit()).as(status.toString()).isEqualTo(ExitCode.FINDING);
            assertThat(status.stdout()).contains("problem: " + elsewhere);
        }
        assertThat(query("SELECT database FROM pg_replication_slots WHERE slot_name = ?", slot))
                .as("the other database's uninstall left the slot alone").containsExactly(database.name());
    }

    private static long retained(Cli.Run status) {
        Matcher m = RETAINED.matcher(status.stdout());
        assertThat(m.find()).as("WAL retained in\n" + status).isTrue();
        return Long.parseLong(m.group(1));
    }

    private List<String> query(String sql, String... params) throws SQLException {
        try (Connection c = database.dataSource().getConnection(); PreparedStatement ps = c.prepareStatement(sql)) {
            for (int i = 0; i < params.length; i++) {
                ps.setString(i + 1, params[i]);
            }
            List<String> rows = new ArrayList<>();
            try (ResultSet rs = ps.executeQuery()) {
                while (rs.next()) {
                    rows.add(rs.getString(1));
                }
            }
            return rows;
        }
    }
}
