package io.tidemark.postgres;

import io.tidemark.sync.Change;
import io.tidemark.sync.CheckReport;
import io.tidemark.sync.ChangeBatch;
import io.tidemark.sync.ErrorCode;
import io.tidemark.sync.InitialSync;
import io.tidemark.sync.JdbcWatermarkStore;
import io.tidemark.sync.Outcome;
import io.tidemark.sync.SyncEngine;
import io.tidemark.sync.SyncType;
import io.tidemark.sync.TidemarkException;
import io.tidemark.sync.TrackedObject;
import io.tidemark.sync.spi.CallContext;
import io.tidemark.sync.spi.ChangeRequest;
import io.tidemark.sync.spi.ResponsePayload;
import io.tidemark.sync.spi.WatermarkStore;
import io.tidemark.testing.EmbeddedPostgresTest;
import io.tidemark.testing.RecordingDestination;
import io.tidemark.testing.TestDatabase;
import io.zonky.test.db.postgres.embedded.EmbeddedPostgres;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

import com.fasterxml.jackson.databind.DeserializationFeature;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;

import javax.sql.DataSource;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.Statement;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.OptionalLong;
import java.util.concurrent.Callable;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/**
 * The log-based capture end to end on the embedded server (which runs with {@code wal_level = logical}): install,
 * the stream, the answers the engine receives, the slot's position, and what is refused. Every test drops its slot
 * afterwards, since a slot keeps WAL for as long as it exists.
 */
@EmbeddedPostgresTest
class PostgresLogicalProviderTest {

    private static final Duration WAIT = Duration.ofSeconds(20);

    private final TestDatabase database;
    private final WatermarkStore store;
    private final LogicalCaptures captures;

    PostgresLogicalProviderTest(TestDatabase database) {
        this.database = database;
        this.store = JdbcWatermarkStore.create(database.dataSource());
        this.captures = new LogicalCaptures(database, store);
    }

    @AfterEach
    void dropSlots() throws Exception {
        captures.close();
    }

    private String table(String name) {
        database.execute("CREATE TABLE public." + name + " (id int PRIMARY KEY, tag text, n int, at timestamptz,"
                + " doc jsonb, ok boolean, price numeric(8,2))");
        return "public." + name;
    }

    @Test
    void changes_arrive_in_commit_order_each_transaction_whole_with_rows_typed_as_row_to_json() throws Exception {
        String t = table("lg_order");
        PostgresLogicalCapture capture = captures.install(PostgresLogicalCapture.forTables(t));
        RecordingDestination out = new RecordingDestination();
        SyncEngine engine = captures.engine(captures.provider(capture), incremental(capture, "Order"), out);
        assertThat(engine.runOnce().get("Order").outcome()).isEqualTo(Outcome.SEEDED);
        engine.start();

        database.execute("""
                INSERT INTO public.lg_order
                VALUES (1, 'a', 1, '2026-12-04 15:23:57.5+00', '{"k": [1, 2]}', true, 12.50),
                       (2, 'b', 2, NULL, NULL, false, 'NaN');
                UPDATE public.lg_order SET tag = 'a2' WHERE id = 1;
                """); // one transaction: three changes, one version
        database.execute("DELETE FROM public.lg_order WHERE id = 2");
        database.execute("UPDATE public.lg_order SET id = 10 WHERE id = 1"); // a key update
        List<Change> changes = out.awaitChanges(6, WAIT);

        assertThat(changes).extracting(c -> c.operation().orElseThrow().code() + ":" + c.fields().get("id"))
                .containsExactly("I:1", "I:2", "U:1", "D:2", "D:1", "I:10");
        long first = changes.get(0).version().orElseThrow();
        assertThat(changes.get(1).version()).hasValue(first);
        assertThat(changes.get(2).version()).hasValue(first);
        assertThat(changes.get(3).version().orElseThrow()).isGreaterThan(first);
        assertThat(changes.get(4).version().orElseThrow()).isGreaterThan(changes.get(3).version().orElseThrow());
        assertThat(changes.get(5).version()).isEqualTo(changes.get(4).version());

        JsonNode inserted = changes.get(0).fields();
        JsonNode expected = new ObjectMapper().enable(DeserializationFeature.USE_BIG_DECIMAL_FOR_FLOATS)
                .readTree(query("SELECT row_to_json(r)::text FROM (SELECT 1 AS id,"
                + " 'a'::text AS tag, 1 AS n, '2026-12-04 15:23:57.5+00'::timestamptz AS at,"
                + " '{\"k\": [1, 2]}'::jsonb AS doc, true AS ok, 12.50::numeric(8,2) AS price) r"));
        assertThat(inserted).as("typed as row_to_json types them").isEqualTo(expected);
        assertThat(changes.get(1).fields().get("price").asText()).as("NaN is not a JSON number").isEqualTo("NaN");
        assertThat(changes.get(1).fields().get("at").isNull()).isTrue();
        assertThat(changes.get(3).fields().fieldNames()).toIterable().as("a delete carries the key alone")
                .containsExactly("id");
        assertThat(changes.get(2).changedColumns()).as("no old row, so no $changed").isEmpty();
    }

    @Test
    void arrays_composites_and_domains_arrive_as_row_to_json_writes_them_in_changes_and_in_exports() throws Exception {
        database.execute("""
                CREATE DOMAIN public.lg_qty AS int CHECK (VALUE >= 0);
                CREATE TYPE public.lg_dim AS (w numeric, label text, marks int[], seen timestamptz);
                CREATE TABLE public.lg_shapes (id int PRIMARY KEY, qty public.lg_qty, ints int[], words text[],
                    grid int[][], dim public.lg_dim, dims public.lg_dim[], stamps timestamptz[], flags bool[],
                    docs jsonb[], boxes box[], sized int[]);
                """);
        PostgresLogicalCapture capture = captures.install(PostgresLogicalCapture.forTables("public.lg_shapes"));
        RecordingDestination out = new RecordingDestination();
        PostgresLogicalProvider provider = captures.provider(capture);
        SyncEngine engine = captures.engine(provider, incremental(capture, "Shapes"), out);
        engine.runOnce();
        engine.start();
        database.execute("""
                INSERT INTO public.lg_shapes VALUES (1, 3, '{1,NULL,3}', '{"a b","NULL",NULL,"q\\"x",""}',
                    '{{1,2},{3,4}}', ROW(1.5, 'l, "m"', '{7}', '2026-12-04 15:23:57.5+00'),
                    ARRAY[ROW(NULL, NULL, NULL, NULL), ROW(2, 'x', '{}', NULL)]::public.lg_dim[],
                    '{"2026-12-04 15:23:57+00",infinity}', '{t,f}', ARRAY['{"k": [1]}'::jsonb, 'null'],
                    '{(1,1),(0,0);(2,2),(1,1)}', '[0:1]={5,6}'),
                    (2, NULL, '{}', NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL)
                """);
        List<Change> changes = out.awaitChanges(2, WAIT);

        ObjectMapper mapper = new ObjectMapper().enable(DeserializationFeature.USE_BIG_DECIMAL_FOR_FLOATS);
        for (Change change : changes) {
            int id = change.fields().get("id").asInt();
            JsonNode expected = mapper.readTree(query("SELECT row_to_json(s)::text FROM public.lg_shapes s"
                    + " WHERE id = " + id));
            assertThat(mapper.readTree(change.fields().toString())).as("row %s as row_to_json writes it", id)
                    .isEqualTo(expected);
        }
        TrackedObject full = incremental(capture, "ShapesExport");
        provider.validate(full);
        JsonNode export = json(provider.invoke(full, ChangeRequest.initialFull(java.util.OptionalInt.empty()),
                CallContext.none()));
        assertThat(export.get("Data")).hasSize(2);
        for (JsonNode row : export.get("Data")) {
            JsonNode diff = changes.stream().filter(c -> c.fields().get("id").asInt() == row.get("id").asInt())
                    .findFirst().orElseThrow().fields();
            assertThat(mapper.readTree(row.toString())).as("the export's row and the change's agree")
                    .isEqualTo(mapper.readTree(diff.toString()));
        }
    }

    @Test
    void a_slot_of_the_same_name_in_another_database_is_neither_taken_nor_dropped() throws Exception {
        String t = table("lg_elsewhere");
        PostgresLogicalCapture capture = captures.install(PostgresLogicalCapture.forTables(t));
        try (TestDatabase other = io.tidemark.testing.EmbeddedPostgresServer.shared().createDatabase()) {
            other.execute("CREATE TABLE public.lg_elsewhere (id int PRIMARY KEY)");
            PostgresLogicalCapture same = PostgresLogicalCapture.forTables(t).slot(capture.slot()).build();
            String elsewhere = "the replication slot " + capture.slot() + " belongs to the database "
                    + database.name() + ", not " + other.name();
            assertThatThrownBy(() -> same.install(other.dataSource())).isInstanceOfSatisfying(
                    TidemarkException.class, e -> {
                        assertThat(e.code()).isEqualTo(ErrorCode.SCHEMA_UNSUPPORTED);
                        assertThat(e.getMessage()).contains(elsewhere);
                    });
            assertThatThrownBy(() -> same.uninstall(other.dataSource())).isInstanceOfSatisfying(
                    TidemarkException.class, e -> assertThat(e.getMessage()).contains(elsewhere));
            PostgresLogicalProvider provider = PostgresLogicalProvider.builder(same)
                    .connect(other.jdbcUrl(), "postgres", null).watermarks(store).build();
            captures.closeLater(provider);
            assertThat(provider.check(List.of(incremental(same, "Elsewhere"))))
                    .as("the slot reported, and the other checks still run: the publication is missing there")
                    .anySatisfy(p -> assertThat(p.message()).contains(elsewhere))
                    .anySatisfy(p -> assertThat(p.message()).contains("publication").contains("does not exist"));
        }
        assertThat(query("SELECT database FROM pg_replication_slots WHERE slot_name = '" + capture.slot() + "'"))
                .as("the slot is still this database's").isEqualTo(database.name());
    }

    @Test
    void with_old_rows_an_update_names_its_changed_columns_and_a_delete_carries_the_old_row() throws Exception {
        String t = table("lg_old");
        PostgresLogicalCapture capture = captures.install(PostgresLogicalCapture.forTables(t).oldRows(true));
        assertThat(query("SELECT relreplident::text FROM pg_class WHERE oid = 'public.lg_old'::regclass"))
                .isEqualTo("f");
        RecordingDestination out = new RecordingDestination();
        SyncEngine engine = captures.engine(captures.provider(capture), incremental(capture, "Old"), out);
        engine.runOnce();
        engine.start();
        database.execute("INSERT INTO public.lg_old (id, tag, n) VALUES (1, 'a', 1)");
        database.execute("UPDATE public.lg_old SET n = 2, tag = 'a' WHERE id = 1");
        database.execute("UPDATE public.lg_old SET tag = NULL WHERE id = 1");
        database.execute("DELETE FROM public.lg_old WHERE id = 1");
        List<Change> changes = out.awaitChanges(4, WAIT);
        assertThat(changes.get(1).changedColumns()).hasValue(List.of("n"));
        assertThat(changes.get(2).changedColumns()).hasValue(List.of("tag"));
        assertThat(changes.get(3).fields().get("n").asInt()).as("the whole old row").isEqualTo(2);
    }

    @Test
    void a_truncate_arrives_as_a_full_answer_without_rows_between_the_changes_around_it() throws Exception {
        String t = table("lg_trunc");
        PostgresLogicalCapture capture = captures.install(PostgresLogicalCapture.forTables(t));
        RecordingDestination out = new RecordingDestination();
        SyncEngine engine = captures.engine(captures.provider(capture), incremental(capture, "Trunc"), out);
        engine.runOnce();
        database.execute("INSERT INTO public.lg_trunc (id) VALUES (1)");
        database.execute("INSERT INTO public.lg_trunc (id) VALUES (2); TRUNCATE public.lg_trunc;"
                + " INSERT INTO public.lg_trunc (id) VALUES (3)");
        database.execute("INSERT INTO public.lg_trunc (id) VALUES (4)");
        engine.start();
        long last = out.awaitChanges(3, WAIT).get(2).version().orElseThrow();
        awaitStored("Trunc", last);
        List<ChangeBatch> batches = out.batches();
        List<String> seen = new ArrayList<>();
        for (ChangeBatch b : batches) {
            seen.add(b.syncType() + ":" + b.reasonCode() + ":" + b.changes().stream()
                    .map(c -> c.fields().get("id").asText()).toList());
        }
        assertThat(seen).as("the insert of 2 went with the truncate; the Full answer holds what its transaction"
                        + " wrote after it").containsExactly("DIFF:0:[1]", "FULL:2:[3]", "DIFF:0:[4]");
    }

    @Test
    void a_transaction_committing_after_a_later_one_is_delivered_after_it() throws Exception {
        String t = table("lg_inflight");
        PostgresLogicalCapture capture = captures.install(PostgresLogicalCapture.forTables(t));
        RecordingDestination out = new RecordingDestination();
        SyncEngine engine = captures.engine(captures.provider(capture), incremental(capture, "Inflight"), out);
        engine.runOnce();
        engine.start();
        try (Connection early = database.dataSource().getConnection()) {
            early.setAutoCommit(false);
            try (Statement s = early.createStatement()) {
                s.execute("INSERT INTO public.lg_inflight (id) VALUES (1)"); // begins first, commits last
            }
            database.execute("INSERT INTO public.lg_inflight (id) VALUES (2)");
            long later = out.awaitChanges(1, WAIT).get(0).version().orElseThrow();
            awaitStored("Inflight", later); // the watermark moves past the later transaction
            early.commit();
        }
        List<Change> changes = out.awaitChanges(2, WAIT);
        assertThat(changes).extracting(c -> c.fields().get("id").asInt()).containsExactly(2, 1);
        assertThat(changes.get(1).version().orElseThrow()).isGreaterThan(changes.get(0).version().orElseThrow());
    }

    @Test
    void a_new_provider_continues_from_the_stored_watermark_and_the_slot_never_passes_it() throws Exception {
        String t = table("lg_restart");
        PostgresLogicalCapture capture = captures.install(PostgresLogicalCapture.forTables(t));
        RecordingDestination out = new RecordingDestination();
        PostgresLogicalProvider first = captures.provider(capture);
        SyncEngine engine = captures.engine(first, incremental(capture, "Restart"), out);
        engine.runOnce();
        engine.start();
        database.execute("INSERT INTO public.lg_restart (id) SELECT g FROM generate_series(1, 50) g");
        out.awaitChanges(50, WAIT);
        long stored = awaitStored("Restart", 1);
        awaitSlotAt(capture, stored);
        engine.close();
        first.close();

        database.execute("INSERT INTO public.lg_restart (id) SELECT g FROM generate_series(51, 80) g");
        database.execute("DELETE FROM public.lg_restart WHERE id <= 10");
        RecordingDestination after = new RecordingDestination();
        SyncEngine second = captures.engine(captures.provider(capture), incremental(capture, "Restart"), after);
        second.start();
        List<Change> changes = after.awaitChanges(40, WAIT);
        assertThat(changes).extracting(c -> c.operation().orElseThrow().code() + c.fields().get("id"))
                .as("exactly what came after the stored watermark")
                .containsExactlyElementsOf(expectedRestart());
        assertThat(slotPosition(capture)).as("the slot never passes the stored watermark")
                .isLessThanOrEqualTo(store.load("Restart").orElseThrow().version().orElseThrow());
    }

    @Test
    void an_object_untracked_live_holds_the_slot_no_more_and_tracked_again_gets_the_table_whole() throws Exception {
        String t = table("lg_untrack");
        PostgresLogicalCapture capture = captures.install(PostgresLogicalCapture.forTables(t));
        RecordingDestination out = new RecordingDestination();
        SyncEngine engine = SyncEngine.builder().name("logical-untrack").provider(captures.provider(capture))
                .watermarks(store).track(incremental(capture, "Stays")).track(incremental(capture, "Leaves"))
                .destination("out", out).build();
        captures.closeLater(engine);
        engine.runOnce(); // both seeded
        database.execute("INSERT INTO public.lg_untrack (id) VALUES (1)");
        until("both stored the insert", () -> {
            engine.runOnce();
            return out.changes().size() == 2;
        });
        long left = stored("Leaves");
        engine.untrack("Leaves");

        database.execute("INSERT INTO public.lg_untrack (id) VALUES (2)");
        until("the remaining object stores the second insert", () -> {
            engine.runOnce();
            return stored("Stays") > left;
        });
        awaitSlotAt(capture, stored("Stays"));

        engine.track(incremental(capture, "Leaves"));
        engine.runOnce();
        List<ChangeBatch> batches = out.batches();
        ChangeBatch back = batches.get(batches.size() - 1);
        assertThat(back.objectName()).isEqualTo("Leaves");
        assertThat(back.syncType()).as("its watermark is below what the provider holds").isEqualTo(SyncType.FULL);
        assertThat(back.reasonCode()).isEqualTo(PostgresLogicalCapture.AGED_OUT_REASON_CODE);
        assertThat(back.changes()).extracting(c -> c.fields().get("id").asInt()).containsExactlyInAnyOrder(1, 2);
    }

    private static List<String> expectedRestart() {
        List<String> expected = new ArrayList<>();
        for (int i = 51; i <= 80; i++) {
            expected.add("I" + i);
        }
        for (int i = 1; i <= 10; i++) {
            expected.add("D" + i);
        }
        return expected;
    }

    @Test
    void readers_far_behind_stop_the_stream_and_lose_nothing() throws Exception {
        String t = table("lg_behind");
        PostgresLogicalCapture capture = captures.install(PostgresLogicalCapture.forTables(t));
        PostgresLogicalProvider provider = captures.provider(captures.builder(capture).maxBufferedChanges(1_000));
        RecordingDestination out = new RecordingDestination().refuseAll();
        SyncEngine engine = captures.engine(provider, incremental(capture, "Behind"), out);
        engine.runOnce();
        engine.start();
        for (int i = 0; i < 5; i++) {
            database.execute("INSERT INTO public.lg_behind (id) SELECT g FROM generate_series(" + (i * 1000 + 1)
                    + ", " + (i * 1000 + 1000) + ") g");
        }
        Thread.sleep(1_000); // the stream fills its buffer and waits: the destination refuses everything
        out.acceptAll();
        List<Change> changes = out.awaitChanges(5_000, WAIT);
        assertThat(changes).extracting(c -> c.fields().get("id").asInt()).doesNotHaveDuplicates().hasSize(5_000);
    }

    @Test
    void a_read_below_what_the_readers_stored_gets_the_table_whole_rather_than_a_gap() throws Exception {
        String t = table("lg_aged");
        PostgresLogicalCapture capture = captures.install(PostgresLogicalCapture.forTables(t));
        PostgresLogicalProvider provider = captures.provider(capture);
        TrackedObject object = incremental(capture, "Aged");
        provider.validate(object);
        long seed = version(provider.invoke(object, ChangeRequest.seed(), CallContext.none()));
        store.advance("Aged", provider.sourceIdentity(object), OptionalLong.empty(), seed, Instant.now());
        database.execute("INSERT INTO public.lg_aged (id, tag) VALUES (1, 'a'), (2, 'b')");
        long after = awaitVersionAbove(provider, object, seed);
        store.advance("Aged", provider.sourceIdentity(object), OptionalLong.of(seed), after, Instant.now());
        awaitSlotAt(capture, after);

        JsonNode answer = json(provider.invoke(object, ChangeRequest.sync(seed), CallContext.none()));
        assertThat(answer.get("Metadata").get("Sync").get("Type").asText()).isEqualTo("Full");
        assertThat(answer.get("Metadata").get("Sync").get("ReasonCode").asInt()).isEqualTo(1);
        assertThat(answer.get("Data")).extracting(r -> r.get("tag").asText()).containsExactlyInAnyOrder("a", "b");
        assertThat(answer.get("Metadata").get("Sync").get("Version").asLong()).isGreaterThanOrEqualTo(after);
    }

    @Test
    void a_full_first_cycle_exports_the_table_whole_and_continues_with_the_changes_after_it() throws Exception {
        String t = table("lg_full");
        database.execute("INSERT INTO public.lg_full (id, tag) SELECT g, 'before' FROM generate_series(1, 500) g");
        PostgresLogicalCapture capture = captures.install(PostgresLogicalCapture.forTables(t));
        RecordingDestination out = new RecordingDestination();
        SyncEngine engine = captures.engine(captures.provider(capture), capture.track("Full"), out);
        // A writer keeps changing the table while the first cycle exports it.
        java.util.concurrent.atomic.AtomicBoolean writing = new java.util.concurrent.atomic.AtomicBoolean(true);
        Thread writer = new Thread(() -> {
            int i = 0;
            while (writing.get()) {
                i++;
                // Committed synchronously, as on a production server: decoded as soon as committed, so that an
                // export whose version came after its snapshot would skip a transaction here.
                database.execute("SET synchronous_commit = on; UPDATE public.lg_full SET tag = 'w" + i
                        + "' WHERE id = " + (1 + i % 500) + "; INSERT INTO public.lg_full (id, tag) VALUES ("
                        + (1000 + i) + ", 'new')");
            }
        });
        writer.start();
        until("the writer inserts", () -> Integer.parseInt(query("SELECT count(*) FROM public.lg_full")) > 510);
        assertThat(engine.runOnce().get("Full").outcome()).isEqualTo(Outcome.DELIVERED);
        assertThat(out.batches().get(0).syncType()).isEqualTo(SyncType.FULL);
        engine.start();
        until("changes after the export", () -> out.batches().size() > 3); // the writer runs on meanwhile
        writing.set(false);
        writer.join();
        until("the replay catches up", () -> replay(out.batches()).equals(rows("public.lg_full")), false);
        assertThat(replay(out.batches())).as("the export and the changes after it give the table")
                .isEqualTo(rows("public.lg_full"));
    }

    /** Full batches replace what the consumer holds; changes apply in order. */
    private static java.util.Map<Integer, String> replay(List<ChangeBatch> batches) {
        java.util.Map<Integer, String> state = new java.util.TreeMap<>();
        for (ChangeBatch b : batches) {
            if (b.syncType() == SyncType.FULL) {
                state.clear();
            }
            for (Change c : b.changes()) {
                int id = c.fields().get("id").asInt();
                if (c.operation().map(o -> o == io.tidemark.sync.Operation.DELETE).orElse(false)) {
                    state.remove(id);
                } else {
                    state.put(id, c.fields().get("tag").asText());
                }
            }
        }
        return state;
    }

    private java.util.Map<Integer, String> rows(String table) throws Exception {
        java.util.Map<Integer, String> rows = new java.util.TreeMap<>();
        try (Connection c = database.dataSource().getConnection(); Statement s = c.createStatement();
             ResultSet rs = s.executeQuery("SELECT id, tag FROM " + table)) {
            while (rs.next()) {
                rows.put(rs.getInt(1), rs.getString(2));
            }
        }
        return rows;
    }

    @Test
    void install_refuses_a_table_without_a_replica_identity_before_changing_anything() {
        database.execute("CREATE TABLE public.lg_nokey (id int, tag text)");
        PostgresLogicalCapture capture = PostgresLogicalCapture.forTables("public.lg_nokey")
                .slot(LogicalCaptures.slot("tm_lt_nokey")).build();
        assertThatThrownBy(() -> capture.install(database.dataSource()))
                .isInstanceOfSatisfying(TidemarkException.class, e -> {
                    assertThat(e.code()).isEqualTo(ErrorCode.SCHEMA_UNSUPPORTED);
                    assertThat(e.getMessage()).contains("\"public\".\"lg_nokey\"", "no replica identity",
                            "oldRows(true)");
                });
        assertThat(query("SELECT count(*) FROM pg_replication_slots WHERE slot_name = '" + capture.slot() + "'"))
                .isEqualTo("0");
        assertThat(query("SELECT count(*) FROM pg_publication WHERE pubname = '" + capture.publication() + "'"))
                .isEqualTo("0");
        database.execute("INSERT INTO public.lg_nokey VALUES (1, 'a'); UPDATE public.lg_nokey SET tag = 'b'");
    }

    @Test
    void install_refuses_a_partitioned_table_whose_changes_would_come_under_other_names() {
        database.execute("CREATE TABLE public.lg_parted (id int PRIMARY KEY) PARTITION BY RANGE (id);"
                + " CREATE TABLE public.lg_parted_1 PARTITION OF public.lg_parted FOR VALUES FROM (0) TO (100)");
        PostgresLogicalCapture capture = PostgresLogicalCapture.forTables("public.lg_parted")
                .slot(LogicalCaptures.slot("tm_lt_parted")).build();
        assertThatThrownBy(() -> capture.install(database.dataSource()))
                .isInstanceOfSatisfying(TidemarkException.class, e -> {
                    assertThat(e.code()).isEqualTo(ErrorCode.SCHEMA_UNSUPPORTED);
                    assertThat(e.getMessage()).contains("partitioned", "capture its partitions");
                });
    }

    @Test
    void a_server_without_logical_decoding_is_refused_with_the_setting_to_change() throws Exception {
        try (EmbeddedPostgres replica = EmbeddedPostgres.builder().setPGStartupWait(Duration.ofSeconds(60))
                .setServerConfig("wal_level", "replica").start()) {
            DataSource dataSource = replica.getPostgresDatabase();
            try (Connection c = dataSource.getConnection(); Statement s = c.createStatement()) {
                s.execute("CREATE TABLE public.items (id int PRIMARY KEY)");
            }
            PostgresLogicalCapture capture = PostgresLogicalCapture.forTables("public.items").build();
            assertThatThrownBy(() -> capture.install(dataSource))
                    .isInstanceOfSatisfying(TidemarkException.class, e -> {
                        assertThat(e.code()).isEqualTo(ErrorCode.LOGICAL_DECODING_DISABLED);
                        assertThat(e.getMessage()).contains("wal_level = replica", "ALTER SYSTEM SET wal_level"
                                + " = logical");
                    });
            PostgresLogicalProvider provider = PostgresLogicalProvider.builder(capture)
                    .connect(replica.getJdbcUrl("postgres", "postgres"), "postgres", null).watermarks(store)
                    .build();
            assertThat(provider.check(List.of(incremental(capture, "Items"))))
                    .extracting(CheckReport.Problem::code)
                    .contains(ErrorCode.LOGICAL_DECODING_DISABLED);
        }
    }

    @Test
    void install_is_idempotent_adds_the_tables_a_publication_lacks_and_uninstall_removes_everything() {
        String a = table("lg_inst_a");
        String b = table("lg_inst_b");
        PostgresLogicalCapture one = captures.install(PostgresLogicalCapture.forTables(a));
        PostgresLogicalCapture both = PostgresLogicalCapture.forTables(a, b).slot(one.slot()).build();
        both.install(database.dataSource());
        both.install(database.dataSource());
        assertThat(query("SELECT string_agg(tablename, ',' ORDER BY tablename) FROM pg_publication_tables"
                + " WHERE pubname = '" + one.publication() + "'")).isEqualTo("lg_inst_a,lg_inst_b");
        assertThat(query("SELECT plugin FROM pg_replication_slots WHERE slot_name = '" + one.slot() + "'"))
                .isEqualTo("pgoutput");
        both.uninstall(database.dataSource());
        assertThat(query("SELECT count(*) FROM pg_replication_slots WHERE slot_name = '" + one.slot() + "'"))
                .isEqualTo("0");
        assertThat(query("SELECT count(*) FROM pg_publication WHERE pubname = '" + one.publication() + "'"))
                .isEqualTo("0");
    }

    @Test
    void the_script_creates_the_identities_the_publication_and_the_slot_for_a_dba_to_review() {
        String script = PostgresLogicalCapture.forTables("public.items", "sales.orders").slot("shop").oldRows(true)
                .build().script();
        assertThat(script).contains(
                "ALTER TABLE \"public\".\"items\" REPLICA IDENTITY FULL;",
                "ALTER TABLE \"sales\".\"orders\" REPLICA IDENTITY FULL;",
                "CREATE PUBLICATION \"shop\" FOR TABLE \"public\".\"items\", \"sales\".\"orders\"",
                "WITH (publish = 'insert, update, delete, truncate');",
                "SELECT pg_catalog.pg_create_logical_replication_slot('shop', 'pgoutput');",
                "-- Needs wal_level = logical");
    }

    @Test
    void a_role_with_replication_but_no_superuser_rights_installs_and_streams() throws Exception {
        DataSource role = database.createRole("lg_replicator");
        database.execute("ALTER ROLE lg_replicator REPLICATION; GRANT CREATE ON DATABASE " + database.name()
                + " TO lg_replicator; GRANT CREATE ON SCHEMA public TO lg_replicator");
        try (Connection c = role.getConnection(); Statement s = c.createStatement()) {
            s.execute("CREATE TABLE public.lg_role (id int PRIMARY KEY, tag text)");
        }
        PostgresLogicalCapture capture = PostgresLogicalCapture.forTables("public.lg_role")
                .slot(LogicalCaptures.slot("tm_lt_role")).build();
        capture.install(role);
        captures.uninstallLater(capture);
        PostgresLogicalProvider provider = PostgresLogicalProvider.builder(capture)
                .connect(database.jdbcUrl(), "lg_replicator", "pw_lg_replicator").watermarks(store).build();
        captures.closeLater(provider);
        assertThat(provider.check(List.of(incremental(capture, "Role")))).isEmpty();
        RecordingDestination out = new RecordingDestination();
        SyncEngine engine = captures.engine(provider, incremental(capture, "Role"), out);
        engine.runOnce();
        engine.start();
        try (Connection c = role.getConnection(); Statement s = c.createStatement()) {
            s.execute("INSERT INTO public.lg_role VALUES (1, 'a')");
        }
        assertThat(out.awaitChanges(1, WAIT).get(0).fields().get("tag").asText()).isEqualTo("a");
    }

    @Test
    void what_cannot_work_is_refused_when_the_engine_is_built() {
        String t = table("lg_refused");
        PostgresLogicalCapture capture = PostgresLogicalCapture.forTables(t).slot("tm_lt_never").build();
        PostgresLogicalProvider provider = PostgresLogicalProvider.builder(capture)
                .connect(database.jdbcUrl(), "postgres", null).watermarks(store).build();
        assertThatThrownBy(() -> provider.validate(TrackedObject.of("Other", "public.elsewhere")
                .initialSync(InitialSync.INCREMENTAL)))
                .isInstanceOfSatisfying(TidemarkException.class, e -> assertThat(e.getMessage())
                        .contains("public.elsewhere", "is not one of the logical capture's tables"));
        assertThat(provider.check(List.of(incremental(capture, "Refused"))))
                .extracting(p -> p.code() + ": " + p.message())
                .anySatisfy(p -> assertThat(p).startsWith("SCHEMA_UNSUPPORTED").contains("does not exist"));
        assertThatThrownBy(() -> PostgresLogicalProvider.builder(capture).connect(database.jdbcUrl(), "postgres",
                null).build()).hasMessageContaining("watermarks(store)");
        assertThatThrownBy(() -> PostgresLogicalCapture.forTables(t).slot("Bad-Name").build())
                .isInstanceOfSatisfying(TidemarkException.class,
                        e -> assertThat(e.code()).isEqualTo(ErrorCode.INVALID_IDENTIFIER));
    }

    @Test
    void a_reader_whose_watermark_the_slot_has_passed_gets_the_table_whole_rather_than_a_gap() throws Exception {
        String t = table("lg_gap");
        PostgresLogicalCapture capture = captures.install(PostgresLogicalCapture.forTables(t));
        TrackedObject x = incremental(capture, "GapX");
        TrackedObject y = incremental(capture, "GapY");
        PostgresLogicalProvider first = captures.provider(capture);          // X seeds and stores, then goes away
        first.validate(x);
        long seed = version(first.invoke(x, ChangeRequest.seed(), CallContext.none()));
        store.advance("GapX", first.sourceIdentity(x), OptionalLong.empty(), seed, Instant.now());
        first.close();
        database.execute("INSERT INTO public.lg_gap (id, tag) VALUES (1, 'x must get this')");
        PostgresLogicalProvider second = captures.provider(capture);         // only Y is tracked: the slot moves past it
        second.validate(y);
        store.advance("GapY", second.sourceIdentity(y), OptionalLong.empty(), seed, Instant.now());
        long yVersion = awaitVersionAbove(second, y, seed);
        store.advance("GapY", second.sourceIdentity(y), OptionalLong.of(seed), yVersion, Instant.now());
        awaitSlotAt(capture, yVersion);
        second.close();

        PostgresLogicalProvider third = captures.provider(capture);          // X is back, its watermark below the slot
        third.validate(x);
        third.validate(y);
        JsonNode answer = json(third.invoke(x, ChangeRequest.sync(seed), CallContext.none()));
        assertThat(answer.get("Metadata").get("Sync").get("Type").asText()).as("answer %s", answer).isEqualTo("Full");
        assertThat(answer.get("Metadata").get("Sync").get("ReasonCode").asInt()).isEqualTo(1);
        assertThat(answer.get("Data")).extracting(r -> r.get("tag").asText()).containsExactly("x must get this");
    }

    @Test
    void a_table_renamed_while_captured_keeps_its_changes() throws Exception {
        String t = table("lg_rename");
        PostgresLogicalCapture capture = captures.install(PostgresLogicalCapture.forTables(t));
        RecordingDestination out = new RecordingDestination();
        SyncEngine engine = captures.engine(captures.provider(capture), incremental(capture, "Rename"), out);
        engine.runOnce();
        engine.start();
        database.execute("INSERT INTO public.lg_rename (id) VALUES (1)");
        out.awaitChanges(1, WAIT);
        database.execute("ALTER TABLE public.lg_rename RENAME TO lg_renamed");
        database.execute("INSERT INTO public.lg_renamed (id) VALUES (2)");
        assertThat(out.awaitChanges(2, WAIT)).extracting(c -> c.fields().get("id").asInt()).containsExactly(1, 2);
        database.execute("ALTER TABLE public.lg_renamed RENAME TO lg_rename");
    }

    @Test
    void a_key_update_with_old_rows_keeps_the_large_values_it_left_alone() throws Exception {
        database.execute("CREATE TABLE public.lg_toast (id int PRIMARY KEY, big text);"
                + " ALTER TABLE public.lg_toast ALTER COLUMN big SET STORAGE EXTERNAL");
        PostgresLogicalCapture capture = captures.install(PostgresLogicalCapture.forTables("public.lg_toast").oldRows(true));
        RecordingDestination out = new RecordingDestination();
        SyncEngine engine = captures.engine(captures.provider(capture), incremental(capture, "Toast"), out);
        engine.runOnce();
        engine.start();
        database.execute("INSERT INTO public.lg_toast VALUES (1, repeat('x', 10000))");
        database.execute("UPDATE public.lg_toast SET id = 2 WHERE id = 1");
        List<Change> changes = out.awaitChanges(3, WAIT);
        assertThat(changes).extracting(c -> c.operation().orElseThrow().code() + c.fields().get("id"))
                .containsExactly("I1", "D1", "I2");
        assertThat(changes.get(2).fields().get("big").asText()).hasSize(10_000);
    }

    @Test
    void install_refuses_a_publication_that_would_hide_changes_and_an_identity_it_cannot_read_keys_from() {
        String t = table("lg_pub");
        database.execute("CREATE PUBLICATION lg_pub_inserts FOR TABLE public.lg_pub WITH (publish = 'insert')");
        try {
            assertThatThrownBy(() -> PostgresLogicalCapture.forTables(t).slot(LogicalCaptures.slot("tm_lt_pub"))
                    .publication("lg_pub_inserts").build().install(database.dataSource()))
                    .isInstanceOfSatisfying(TidemarkException.class, e -> {
                        assertThat(e.code()).isEqualTo(ErrorCode.SCHEMA_UNSUPPORTED);
                        assertThat(e.getMessage()).contains("does not publish update, delete, truncate",
                                "ALTER PUBLICATION");
                    });
        } finally {
            database.execute("DROP PUBLICATION lg_pub_inserts");
        }
        database.execute("CREATE TABLE public.lg_index (id int PRIMARY KEY, code text NOT NULL UNIQUE);"
                + " ALTER TABLE public.lg_index REPLICA IDENTITY USING INDEX lg_index_code_key");
        assertThatThrownBy(() -> PostgresLogicalCapture.forTables("public.lg_index")
                .slot(LogicalCaptures.slot("tm_lt_idx")).build().install(database.dataSource()))
                .hasMessageContaining("REPLICA IDENTITY USING INDEX");
        assertThatThrownBy(() -> PostgresLogicalCapture.forTables(t).publication("ShopPub").build())
                .isInstanceOfSatisfying(TidemarkException.class,
                        e -> assertThat(e.code()).isEqualTo(ErrorCode.INVALID_IDENTIFIER));
    }

    @Test
    void a_wake_up_that_throws_does_not_stop_the_stream() throws Exception {
        String t = table("lg_wake");
        PostgresLogicalCapture capture = captures.install(PostgresLogicalCapture.forTables(t));
        PostgresLogicalProvider provider = captures.provider(captures.builder(capture).readInterval(Duration.ZERO));
        TrackedObject x = incremental(capture, "Wake");
        provider.validate(x);
        long seed = version(provider.invoke(x, ChangeRequest.seed(), CallContext.none()));
        captures.closeLater(provider.subscribe(List.of(x), name -> {
            throw new StackOverflowError("simulated");
        }));
        database.execute("INSERT INTO public.lg_wake (id) VALUES (1)");
        long first = awaitVersionAbove(provider, x, seed);
        database.execute("INSERT INTO public.lg_wake (id) VALUES (2)");
        assertThat(awaitVersionAbove(provider, x, first)).isGreaterThan(first);
    }

    @Test
    void a_slot_held_back_by_a_reader_is_reported_naming_the_reader() throws Exception {
        String t = table("lg_lag");
        PostgresLogicalCapture capture = captures.install(PostgresLogicalCapture.forTables(t));
        PostgresLogicalProvider provider = captures.provider(captures.builder(capture).slotLagWarning(0)
                .slotLagCheckInterval(Duration.ofMillis(1)));
        TrackedObject held = incremental(capture, "Held");
        provider.validate(held);
        long seed = version(provider.invoke(held, ChangeRequest.seed(), CallContext.none()));
        store.advance("Held", provider.sourceIdentity(held), OptionalLong.empty(), seed, Instant.now());
        database.execute("INSERT INTO public.lg_lag (id) SELECT g FROM generate_series(1, 1000) g");
        awaitVersionAbove(provider, held, seed); // decoded; "Held" stores nothing more, so it holds the slot

        List<io.tidemark.sync.Diagnostic> found = new ArrayList<>();
        until("a diagnostic", () -> {
            found.clear();
            found.addAll(provider.diagnose(held, OptionalLong.of(seed)));
            return !found.isEmpty();
        });
        assertThat(found).singleElement().satisfies(d -> {
            assertThat(d.code()).isEqualTo("SLOT_WAL_RETAINED");
            assertThat(d.details()).containsEntry("heldBy", "Held").containsEntry("slot", capture.slot());
            assertThat(Long.parseLong(d.details().get("retainedBytes"))).isPositive();
            assertThat(d.message()).contains("held by Held");
        });
        PostgresLogicalProvider quiet = PostgresLogicalProvider.builder(capture)
                .connect(database.jdbcUrl(), "postgres", null).watermarks(store).build();
        assertThat(quiet.diagnose(held, OptionalLong.of(seed))).as("no stream, no check").isEmpty();
    }

    @Test
    void an_export_never_misses_a_commit_the_stream_decoded_before_it_became_visible() throws Exception {
        String t = table("lg_syncrep");
        PostgresLogicalCapture capture = captures.install(PostgresLogicalCapture.forTables(t));
        PostgresLogicalProvider provider = captures.provider(capture);
        TrackedObject watcher = incremental(capture, "SyncRepWatcher");
        TrackedObject full = capture.track("SyncRepFull");
        provider.validate(watcher);
        provider.validate(full);
        long seed = version(provider.invoke(watcher, ChangeRequest.seed(), CallContext.none()));
        // A synchronous standby that never answers: a commit is written to the WAL (and decoded) and then waits,
        // still invisible, which is the moment a snapshot must not be taken at.
        database.execute("ALTER SYSTEM SET synchronous_standby_names = 'tidemark_nosuch'; SELECT pg_reload_conf()");
        Connection stuck = database.dataSource().getConnection();
        Thread writer = new Thread(() -> {
            try (Statement st = stuck.createStatement()) {
                st.execute("SET synchronous_commit = on; INSERT INTO public.lg_syncrep (id, tag) VALUES (1, 'late')");
            } catch (java.sql.SQLException e) {
                // cancelled below: "the transaction has already committed locally"
            }
        });
        JsonNode export = null;
        try {
            // The reload reaches a backend at its next command: the writer's, before it commits.
            until("the writer's session sees the standby", () -> {
                try (Statement st = stuck.createStatement();
                     ResultSet rs = st.executeQuery("SHOW synchronous_standby_names")) {
                    rs.next();
                    return rs.getString(1).equals("tidemark_nosuch");
                }
            });
            writer.start();
            awaitVersionAbove(provider, watcher, seed); // decoded, though nobody can see it yet
            try {
                export = json(provider.invoke(full, ChangeRequest.initialFull(java.util.OptionalInt.empty()),
                        CallContext.none()));
            } catch (TidemarkException refused) {
                assertThat(refused.getMessage()).contains("consistent with the replication stream");
            }
        } finally {
            database.execute("ALTER SYSTEM RESET synchronous_standby_names; SELECT pg_reload_conf();"
                    + " SELECT pg_cancel_backend(pid) FROM pg_stat_activity WHERE wait_event = 'SyncRep'");
            writer.join();
            stuck.close();
        }
        if (export == null) {
            export = json(provider.invoke(full, ChangeRequest.initialFull(java.util.OptionalInt.empty()),
                    CallContext.none()));
        }
        List<String> seen = new ArrayList<>();
        export.get("Data").forEach(r -> seen.add(r.get("tag").asText()));
        long from = export.get("Metadata").get("Sync").get("Version").asLong();
        JsonNode after = json(provider.invoke(full, ChangeRequest.sync(from), CallContext.none()));
        after.get("Data").forEach(r -> seen.add(r.get("tag").asText()));
        assertThat(seen).as("the export or the changes after it hold the late commit").contains("late");
    }

    // --- helpers ----------------------------------------------------------------------------------------------

    /** The object of a one-table capture, seeded at its first cycle: these tests write after it. */
    private static TrackedObject incremental(PostgresLogicalCapture capture, String name) {
        return capture.track(name).initialSync(InitialSync.INCREMENTAL);
    }

    private static long version(ResponsePayload payload) throws Exception {
        return json(payload).get("Metadata").get("Sync").get("Version").asLong();
    }

    private static JsonNode json(ResponsePayload payload) throws Exception {
        return LogicalCaptures.json(payload);
    }

    /** Until {@code condition} holds, checked every 20 ms; fails naming {@code what} after {@link #WAIT}. */
    private static void until(String what, Callable<Boolean> condition) throws Exception {
        until(what, condition, true);
    }

    /** As {@link #until(String, Callable)}; with {@code failing} false it only waits, the caller asserting after. */
    private static void until(String what, Callable<Boolean> condition, boolean failing) throws Exception {
        if (failing) {
            LogicalCaptures.until(what, WAIT, condition);
        } else {
            LogicalCaptures.within(WAIT, condition);
        }
    }

    private long awaitVersionAbove(PostgresLogicalProvider provider, TrackedObject object, long above)
            throws Exception {
        long[] found = {-1};
        until("a change after version " + above, () -> {
            try {
                JsonNode data = json(provider.invoke(object, ChangeRequest.sync(above), CallContext.none()))
                        .get("Data");
                found[0] = data.size() > 0 ? data.get(0).get("$version").asLong() : -1;
            } catch (TidemarkException e) {
                // The stream reconnecting: the engine would retry the cycle, so does this.
                assertThat(e.code()).isEqualTo(ErrorCode.CONNECTION_FAILED);
            }
            return found[0] >= 0;
        });
        return found[0];
    }

    private long awaitStored(String name, long atLeast) throws Exception {
        until(name + " stores a watermark of at least " + atLeast, () -> stored(name) >= atLeast);
        return stored(name);
    }

    private long stored(String name) {
        return store.load(name).map(s -> s.version()).orElse(OptionalLong.empty()).orElse(-1);
    }

    private void awaitSlotAt(PostgresLogicalCapture capture, long version) throws Exception {
        until("the slot reaches " + version, () -> slotPosition(capture) >= version, false);
        assertThat(slotPosition(capture)).as("the slot reached the stored watermark").isGreaterThanOrEqualTo(version);
    }

    private long slotPosition(PostgresLogicalCapture capture) throws Exception {
        return captures.slotPosition(capture);
    }

    private String query(String sql) {
        try (Connection c = database.dataSource().getConnection(); PreparedStatement s = c.prepareStatement(sql);
             ResultSet rs = s.executeQuery()) {
            rs.next();
            return rs.getString(1);
        } catch (java.sql.SQLException e) {
            throw new IllegalStateException(e);
        }
    }
}
