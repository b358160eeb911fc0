package io.tidemark.postgres.outbox;

import io.tidemark.postgres.CaptureShape;
import com.fasterxml.jackson.databind.JsonNode;
import io.tidemark.testing.EmbeddedPostgresTest;
import io.tidemark.testing.TestDatabase;
import org.junit.jupiter.api.Test;

import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.util.ArrayList;
import java.util.List;
import java.util.stream.StreamSupport;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/** The generated change function against every rule of the procedure contract (docs/contract.md). */
@EmbeddedPostgresTest
class ChangeFunctionTest {

    private final TestDatabase database;

    ChangeFunctionTest(TestDatabase database) {
        this.database = database;
    }

    /** The capture shape of every outbox this class installs; a subclass runs every test on another one. */
    CaptureShape shape() {
        return CaptureShape.FULL_IMAGE;
    }

    private OutboxTables items() {
        return OutboxTables.create(shape(), database, "fn_items", "id int PRIMARY KEY, name text");
    }

    private static List<JsonNode> data(JsonNode response) {
        return StreamSupport.stream(response.get("Data").spliterator(), false).toList();
    }

    private static long version(JsonNode response) {
        return response.at("/Metadata/Sync/Version").asLong();
    }

    /** What the engine stores after a response: the highest $version, else Metadata.Sync.Version. */
    private static long stored(JsonNode response) {
        return data(response).stream().filter(c -> c.has("$version")).mapToLong(c -> c.get("$version").asLong())
                .max().orElse(version(response));
    }

    private static List<String> names(JsonNode response) {
        return data(response).stream().map(c -> c.get("$operation").asText() + c.get("id").asInt()).toList();
    }

    /**
     * The change function is one statement with a branch per kind of answer: only the branch of the request's
     * kind may read. Counted with pg_stat_xact_user_tables, the scans of the calling transaction so far. A diff
     * of an outbox of keys reads the table too (the rows of the changed keys).
     */
    @Test
    void each_request_reads_only_what_its_kind_needs() throws SQLException {
        OutboxTables t = items();
        t.execute("INSERT INTO $T SELECT g, 'row ' || g FROM generate_series(1, 50) g");
        long from = t.seed();
        t.execute("UPDATE $T SET name = name || '!' WHERE id <= 10");

        assertThat(scansDuring(t, "{\"fromVersion\":" + from + ",\"mode\":\"sync\"}"))
                .as("table and outbox scans of a diff").satisfies(scans -> {
                    if (shape() == CaptureShape.KEYS) {
                        assertThat(scans[0]).isPositive();
                    } else {
                        assertThat(scans[0]).isZero();
                    }
                    assertThat(scans[1]).isPositive();
                });
        assertThat(scansDuring(t, "{\"fromVersion\":0,\"mode\":\"sync\"}"))
                .as("table and outbox scans of a full snapshot").satisfies(scans -> {
                    assertThat(scans[0]).isPositive();
                    assertThat(scans[1]).isZero();
                });
        assertThat(scansDuring(t, "{\"mode\":\"seed\"}")).as("table and outbox scans of a seed")
                .containsExactly(0, 0);
    }

    /** {scans of the table, scans of the outbox} made by one call, counted inside its own transaction. */
    private static long[] scansDuring(OutboxTables t, String request) throws SQLException {
        try (Connection c = t.dataSource().getConnection()) {
            c.setAutoCommit(false);
            try (PreparedStatement call = c.prepareStatement("SELECT " + t.outbox.changeFunction() + "(?::json)")) {
                call.setString(1, request);
                try (ResultSet rs = call.executeQuery()) {
                    assertThat(rs.next()).isTrue();
                }
            }
            long[] scans = new long[2];
            try (PreparedStatement stats = c.prepareStatement(
                    "SELECT coalesce(sum(seq_scan + coalesce(idx_scan, 0)) FILTER (WHERE relid = ?::regclass), 0),"
                            + " coalesce(sum(seq_scan + coalesce(idx_scan, 0)) FILTER (WHERE relid = ?::regclass), 0)"
                            + " FROM pg_stat_xact_user_tables")) {
                stats.setString(1, "public." + t.table);
                stats.setString(2, t.outbox.outboxTable());
                try (ResultSet rs = stats.executeQuery()) {
                    rs.next();
                    scans[0] = rs.getLong(1);
                    scans[1] = rs.getLong(2);
                }
            }
            c.rollback();
            return scans;
        }
    }

    @Test
    void seed_returns_no_rows_and_a_version_from_which_the_next_change_is_returned() {
        OutboxTables t = items();
        t.execute("INSERT INTO $T VALUES (1, 'before the seed')");

        JsonNode seed = t.call("{\"fromVersion\":0,\"mode\":\"seed\"}");
        t.execute("INSERT INTO $T VALUES (2, 'after the seed')");
        JsonNode next = t.sync(version(seed));

        assertThat(data(seed)).isEmpty();
        assertThat(seed.at("/Metadata/Sync/Type").asText()).isEqualTo("Diff");
        assertThat(names(next)).containsExactly("I2");
    }

    @Test
    void with_no_rows_the_version_is_just_below_the_horizon_and_nothing_is_skipped() {
        OutboxTables t = items();
        t.execute("INSERT INTO $T VALUES (1, 'a')");
        long from = stored(t.sync(t.seed() - 1));

        JsonNode empty = t.sync(from);
        long horizonAfter = t.scalar("SELECT pg_snapshot_xmin(pg_current_snapshot())::text::bigint");

        assertThat(data(empty)).isEmpty();
        assertThat(version(empty)).isGreaterThanOrEqualTo(from).isLessThan(horizonAfter);
        assertThat(empty.at("/Metadata/Sync/Type").asText()).isEqualTo("Diff");
        assertThat(empty.at("/Metadata/Sync/ReasonCode").asInt()).isZero();
        assertThat(empty.at("/Metadata/Outbox/HeldBack").asBoolean()).isFalse();
        t.execute("INSERT INTO $T VALUES (2, 'b')");
        assertThat(names(t.sync(version(empty)))).containsExactly("I2");
    }

    @Test
    void an_open_transaction_holds_back_its_changes_and_every_later_one_without_losing_them() {
        OutboxTables t = items();
        long from = t.seed();
        try (OpenTransaction open = OpenTransaction.begin(t.dataSource())) {
            open.execute("INSERT INTO public." + t.table + " VALUES (1, 'open')");
            t.execute("INSERT INTO $T VALUES (2, 'committed after')");

            JsonNode held = t.sync(from);

            assertThat(data(held)).isEmpty();
            assertThat(version(held)).isLessThan(open.takeXid());
            assertThat(held.at("/Metadata/Outbox/HeldBack").asBoolean()).isTrue();
            assertThat(held.at("/Metadata/Outbox/Horizon").asLong()).isEqualTo(open.takeXid());
            from = stored(held);
            open.commit();
        }
        assertThat(names(t.sync(from))).containsExactly("I1", "I2");
    }

    @Test
    void the_interleaving_of_design_md_loses_nothing() {
        OutboxTables t = items();
        long watermark = t.seed();
        try (OpenTransaction u = OpenTransaction.begin(t.dataSource());
             OpenTransaction tx = OpenTransaction.begin(t.dataSource())) {
            long uXid = u.takeXid();                                            // 1. U takes its xid first
            tx.execute("INSERT INTO public." + t.table + " VALUES (1, 'T')");  // 2. T's row is captured first
            assertThat(tx.takeXid()).isGreaterThan(uXid);
            u.execute("INSERT INTO public." + t.table + " VALUES (2, 'U')");   // 3. U's row second, U commits
            u.commit();

            JsonNode first = t.sync(watermark);                                 // 4. a poll while T is open
            assertThat(names(first)).containsExactly("I2");
            watermark = stored(first);

            tx.commit();                                                        // 5. T commits
        }
        JsonNode second = t.sync(watermark);
        assertThat(names(second)).containsExactly("I1");
        assertThat(stored(second)).isGreaterThan(watermark);
    }

    @Test
    void changes_of_one_row_come_in_commit_order_even_when_transaction_ids_do_not() {
        OutboxTables t = items();
        t.execute("INSERT INTO $T VALUES (1, 'first')");
        long watermark = stored(t.sync(t.seed() - 1));
        try (OpenTransaction older = OpenTransaction.begin(t.dataSource());
             OpenTransaction younger = OpenTransaction.begin(t.dataSource())) {
            long olderXid = older.takeXid();
            younger.execute("UPDATE public." + t.table + " SET name = 'younger' WHERE id = 1");
            assertThat(younger.takeXid()).isGreaterThan(olderXid);
            younger.commit();
            older.execute("UPDATE public." + t.table + " SET name = 'older, but last' WHERE id = 1");
            older.commit();
        }

        List<JsonNode> updates = data(t.sync(watermark));

        if (shape() == CaptureShape.KEYS) {
            // One net change: the row as the last commit left it.
            assertThat(updates).extracting(c -> c.get("name").asText()).containsExactly("older, but last");
            return;
        }
        assertThat(updates).extracting(c -> c.get("name").asText()).containsExactly("younger", "older, but last");
        assertThat(updates.get(1).get("$version").asLong()).isGreaterThanOrEqualTo(updates.get(0).get("$version").asLong());
    }

    @Test
    void max_rows_cuts_pages_only_between_versions_and_returns_an_oversized_first_version_whole() {
        OutboxTables t = items();
        long watermark = t.seed();
        t.execute("INSERT INTO $T SELECT g, 'bulk' FROM generate_series(1, 5) g");   // one version of 5 rows
        for (int id = 6; id <= 9; id++) {
            t.execute("INSERT INTO $T VALUES (" + id + ", 'single')");
        }

        List<List<String>> pages = new ArrayList<>();
        while (true) {
            JsonNode page = t.sync(watermark, 2);
            if (data(page).isEmpty()) {
                break;
            }
            pages.add(names(page));
            long distinctVersions = data(page).stream().map(c -> c.get("$version").asLong()).distinct().count();
            assertThat(version(page)).isEqualTo(stored(page));
            assertThat(distinctVersions).isGreaterThanOrEqualTo(1);
            watermark = stored(page);
        }

        assertThat(pages).containsExactly(List.of("I1", "I2", "I3", "I4", "I5"), List.of("I6", "I7"),
                List.of("I8", "I9"));
    }

    @Test
    void a_page_is_full_while_changes_are_pending_so_the_engine_keeps_draining() {
        OutboxTables t = items();
        long watermark = t.seed();
        for (int tx = 0; tx < 3; tx++) {
            t.execute("INSERT INTO $T SELECT g, 'x' FROM generate_series(" + (tx * 3 + 1) + ", " + (tx * 3 + 3) + ") g");
        }

        JsonNode first = t.sync(watermark, 4);
        JsonNode second = t.sync(stored(first), 4);

        assertThat(names(first)).as("the version holding the 4th change is returned whole")
                .containsExactly("I1", "I2", "I3", "I4", "I5", "I6");
        assertThat(names(second)).containsExactly("I7", "I8", "I9");
        assertThat(data(t.sync(stored(second), 4))).isEmpty();
    }

    @Test
    void from_version_zero_is_a_full_snapshot_of_the_table_with_reason_zero() {
        database.execute("CREATE TABLE public.fn_preexisting (id int PRIMARY KEY, name text);"
                + " INSERT INTO public.fn_preexisting VALUES (2, 'b'), (1, 'a')");
        io.tidemark.postgres.PostgresOutbox outbox = io.tidemark.postgres.PostgresOutbox.forTable("public.fn_preexisting").capture(shape()).build();
        outbox.install(database.dataSource());

        JsonNode full = OutboxTables.call(database.dataSource(), outbox.changeFunction(),
                "{\"fromVersion\":0,\"mode\":\"sync\",\"maxRows\":1}");

        assertThat(full.at("/Metadata/Sync/Type").asText()).isEqualTo("Full");
        assertThat(full.at("/Metadata/Sync/ReasonCode").asInt()).isZero();
        assertThat(full.get("Data").toString()).isEqualTo("[{\"id\":1,\"name\":\"a\"},{\"id\":2,\"name\":\"b\"}]");
        long horizon = OutboxTables.call(database.dataSource(), outbox.changeFunction(), "{\"mode\":\"seed\"}")
                .at("/Metadata/Sync/Version").asLong();
        assertThat(version(full)).isPositive().isLessThanOrEqualTo(horizon);
    }

    @Test
    void a_reader_older_than_the_outbox_history_gets_a_full_snapshot_with_reason_one() {
        OutboxTables t = items();
        t.execute("INSERT INTO $T VALUES (1, 'a')");
        long trimmedThrough = t.scalar("SELECT trimmed_through FROM " + t.outbox.outboxTable() + "_state");

        JsonNode stale = t.sync(trimmedThrough - 1);
        JsonNode current = t.sync(trimmedThrough);

        assertThat(stale.at("/Metadata/Sync/Type").asText()).isEqualTo("Full");
        assertThat(stale.at("/Metadata/Sync/ReasonCode").asInt()).isEqualTo(1);
        assertThat(stale.get("Data").toString()).isEqualTo("[{\"id\":1,\"name\":\"a\"}]");
        assertThat(current.at("/Metadata/Sync/Type").asText()).isEqualTo("Diff");
        assertThat(names(current)).containsExactly("I1");
    }

    @Test
    void a_from_version_this_outbox_cannot_have_issued_is_refused() {
        OutboxTables t = items();
        long future = t.scalar("SELECT pg_current_xact_id()::text::bigint") + 1_000_000;

        assertThatThrownBy(() -> t.sync(future)).rootCause()
                .hasMessageContaining("fromVersion " + future + " is not a version of public." + t.table + "_outbox")
                .hasMessageContaining("Reset the tracked object");
    }

    @Test
    void a_bad_request_is_refused_with_a_clear_error() {
        OutboxTables t = items();

        assertThatThrownBy(() -> t.call("{\"fromVersion\":1,\"mode\":\"resync\"}")).rootCause()
                .hasMessageContaining("mode must be \"sync\" or \"seed\", got resync");
        assertThatThrownBy(() -> t.call("{\"fromVersion\":1,\"mode\":\"sync\",\"maxRows\":0}")).rootCause()
                .hasMessageContaining("maxRows must be at least 1, got 0");
    }

    @Test
    void every_generated_function_but_the_capture_pins_its_search_path_and_only_the_capture_and_arm_are_security_definer() {
        OutboxTables t = items();

        List<String> functions = new ArrayList<>();
        t.query("SELECT p.proname || ' ' || p.prosecdef || ' ' || coalesce(array_to_string(p.proconfig, ';'), '')"
                + " FROM pg_proc p WHERE p.pronamespace = 'public'::regnamespace AND p.proname LIKE '" + t.table + "%'"
                + " ORDER BY 1", rs -> functions.add(rs.getString(1)));

        // The capture function qualifies every name instead (HostileSearchPathTest); it pins the rendering only.
        // Readers arm the wake-up flag without any privilege on it, hence the arm function's SECURITY DEFINER.
        // An outbox of keys renders nothing at write time: its capture pins only what comparing floats needs.
        String rendering = "TimeZone=UTC;extra_float_digits=1;bytea_output=hex;IntervalStyle=iso_8601";
        assertThat(functions).containsExactly(
                t.table + "_changes false search_path=pg_catalog, pg_temp;" + rendering,
                t.table + "_outbox_arm true search_path=pg_catalog, pg_temp",
                t.table + "_outbox_capture true " + (shape() == CaptureShape.KEYS ? "extra_float_digits=1" : rendering),
                t.table + "_outbox_trim false search_path=pg_catalog, pg_temp");
    }
}
