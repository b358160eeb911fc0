package io.tidemark.kafka.connect;

import io.tidemark.kafka.connect.ConnectTestCluster.Received;
import io.tidemark.postgres.PostgresOutbox;
import io.tidemark.postgres.PostgresProvider;
import io.tidemark.sync.Change;
import io.tidemark.sync.ChangeBatch;
import io.tidemark.sync.InMemoryWatermarkStore;
import io.tidemark.sync.InitialSync;
import io.tidemark.sync.SyncEngine;
import io.tidemark.sync.TrackedObject;
import io.tidemark.testing.EmbeddedPostgresTest;
import io.tidemark.testing.TestDatabase;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

import java.nio.charset.StandardCharsets;
import java.sql.Connection;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.stream.Collectors;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The connector on a real Kafka and Connect cluster (three workers, exactly-once source support enabled) over the
 * embedded PostgreSQL and generated outboxes, configured as the root README's "Kafka Connect" section says.
 */
@EmbeddedPostgresTest
class TidemarkSourceConnectorClusterTest {

    private static ConnectTestCluster cluster;
    private final TestDatabase database;

    TidemarkSourceConnectorClusterTest(TestDatabase database) {
        this.database = database;
    }

    @BeforeAll
    static void startCluster() {
        cluster = new ConnectTestCluster(3);
    }

    @AfterAll
    static void stopCluster() {
        if (cluster != null) {
            cluster.close();
        }
    }

    /** A table with a generated outbox; returns the change function. */
    private String outboxTable(String table, String columns) {
        database.execute("CREATE TABLE public." + table + " (" + columns + ")");
        PostgresOutbox outbox = PostgresOutbox.forTable("public." + table).build();
        outbox.install(database.dataSource());
        return outbox.changeFunction();
    }

    private Map<String, String> config(String prefix, int tasks, Map<String, String> objects) {
        Map<String, String> overrides = new HashMap<>(objects);
        overrides.put("tasks.max", Integer.toString(tasks));
        overrides.put("topic.prefix", prefix);
        overrides.put("position.topic", prefix + "positions");
        overrides.put("poll.interval.ms", "200");
        return ConnectTestCluster.readmeConfig(database.jdbcUrl(), overrides);
    }

    private static Map<String, String> object(String name, String procedure, String key, String initialSync) {
        Map<String, String> o = new LinkedHashMap<>();
        o.put("object." + name + ".procedure", procedure);
        o.put("object." + name + ".key", key);
        o.put("object." + name + ".initial.sync", initialSync);
        return o;
    }

    @Test
    void delivers_inserts_updates_deletes_and_a_full_export_as_the_engine_does() throws Exception {
        String function = outboxTable("items", "item_code text PRIMARY KEY, description text, price numeric(10,2)");
        database.execute("INSERT INTO public.items VALUES ('A-1', 'Widget', 12.50), ('A-2', 'Gadget', 3.00),"
                + " ('A-3', 'Gizmo', 99.99)");
        List<ChangeBatch> engineBatches = new CopyOnWriteArrayList<>();
        try (SyncEngine engine = SyncEngine.builder()
                .provider(PostgresProvider.create(database.dataSource()))
                .watermarks(InMemoryWatermarkStore.create())
                .track(TrackedObject.of("Items", function).initialSync(InitialSync.FULL))
                .destination("same changes", engineBatches::add)
                .build()) {
            Map<String, String> config = config("t1.", 1, object("Items", function, "item_code", "FULL"));
            config.put("tidemark.objects", "Items");
            // No LISTEN: a listening task arms the outbox's wake-up after its first empty read, and that write's
            // transaction moves the horizon, so the task's next read would store a version the engine (which does
            // not listen here) never read, and the two would no longer make the same call.
            config.put(TidemarkSourceConfig.LISTEN, "false");
            engine.runOnce();                                              // the FULL export, as the engine gets it
            cluster.start("items", config, 1);
            cluster.readUntil("t1.Items", records -> records.size() == 3);

            cluster.connect.pauseConnector("items");
            ConnectTestCluster.await("paused", () -> cluster.connect.connectorStatus("items").tasks().get(0)
                    .state().equals("PAUSED"));
            database.execute("UPDATE public.items SET price = 13.00 WHERE item_code = 'A-1'");
            database.execute("DELETE FROM public.items WHERE item_code = 'A-2'");
            database.execute("INSERT INTO public.items VALUES ('A-4', 'Doohickey', NULL)");
            database.execute("BEGIN; UPDATE public.items SET description = NULL WHERE item_code = 'A-3';"
                    + " INSERT INTO public.items VALUES ('A-5', 'Thing', 1.10); COMMIT;");
            engine.runOnce();                                              // the diff, as the engine gets it
            cluster.connect.resumeConnector("items");

            // 3 exported rows, 5 changes, and the delete's tombstone
            List<Received> records = cluster.readUntil("t1.Items", r -> r.size() == 9);
            List<Received> changes = records.stream().filter(r -> r.value() != null).toList();
            List<Change> delivered = engineBatches.stream().flatMap(b -> b.changes().stream()).toList();
            assertThat(engineBatches).extracting(b -> b.syncType().name()).containsExactly("FULL", "DIFF");
            assertThat(changes).hasSameSizeAs(delivered);
            int i = 0;
            for (ChangeBatch batch : engineBatches) {
                for (Change change : batch.changes()) {
                    Received r = changes.get(i++);
                    assertThat(r.value().get("row").asText())
                            .isEqualTo(new String(change.rawUtf8(), StandardCharsets.UTF_8));
                    assertThat(r.value().get("operation").isNull() ? null : r.operation())
                            .isEqualTo(change.operation().map(o -> o.code()).orElse(null));
                    assertThat(r.value().get("version").isNull() ? null : r.value().get("version").asLong())
                            .isEqualTo(change.version().isPresent() ? change.version().getAsLong() : null);
                    assertThat(r.value().get("syncType").asText()).isEqualTo(batch.syncType().name());
                    assertThat(r.key()).isEqualTo("{\"item_code\":\"" + change.field("item_code").orElseThrow()
                            .asText() + "\"}");
                    assertThat(r.headers()).containsEntry("tidemark.syncType", batch.syncType().name())
                            .containsEntry("tidemark.object", "Items")
                            .containsEntry("tidemark.page", Integer.toString(batch.pageNumber()))
                            .containsEntry("tidemark.pageCount", Integer.toString(batch.pageCount()))
                            .containsEntry("tidemark.totalChanges", Long.toString(batch.totalChanges()));
                    if (batch.syncType().name().equals("DIFF")) {
                        // Same call (same from and to versions): the very same envelope, idempotency key included.
                        assertThat(r.headers()).containsEntry("tidemark.idempotencyKey", batch.idempotencyKey())
                                .containsEntry("tidemark.batchId", batch.batchId())
                                .containsEntry("tidemark.fromVersion", Long.toString(batch.fromVersion()))
                                .containsEntry("tidemark.toVersion", Long.toString(batch.toVersion()));
                    }
                }
            }
            assertThat(changes).extracting(Received::operation).containsExactly("null", "null", "null",
                    "U", "D", "I", "U", "I");
            // The delete is followed by its tombstone: same key, no value.
            int delete = records.indexOf(records.stream().filter(r -> r.value() != null
                    && r.operation().equals("D")).findFirst().orElseThrow());
            assertThat(records.get(delete + 1).value()).isNull();
            assertThat(records.get(delete + 1).key()).isEqualTo("{\"item_code\":\"A-2\"}");
        } finally {
            cluster.connect.deleteConnector("items");
        }
    }

    @Test
    void two_tasks_share_six_objects_each_handled_by_exactly_one_task() {
        Map<String, String> objects = new LinkedHashMap<>();
        List<String> names = new ArrayList<>();
        for (int n = 1; n <= 6; n++) {
            String name = "Six" + n;
            names.add(name);
            objects.putAll(object(name, outboxTable("six_" + n, "id int PRIMARY KEY, name text"), "id",
                    "INCREMENTAL"));
        }
        Map<String, String> config = config("t2.", 2, objects);
        config.put("tidemark.objects", String.join(",", names));
        try {
            cluster.start("six", config, 2);
            List<Set<String>> assigned = cluster.connect.taskConfigs("six").stream()
                    .map(t -> Set.of(t.config().get(TidemarkSourceConfig.TASK_OBJECTS).split(","))).toList();
            assertThat(assigned).hasSize(2);
            assertThat(assigned.get(0)).doesNotContainAnyElementsOf(assigned.get(1));
            assertThat(assigned.stream().flatMap(Set::stream).collect(Collectors.toSet()))
                    .containsExactlyInAnyOrderElementsOf(names);
            // every object seeded (its position stored) before the rows, so none of them is skipped
            cluster.readUntil("t2.positions", r -> r.size() == 6);
            for (int n = 1; n <= 6; n++) {
                database.execute("INSERT INTO public.six_" + n + " SELECT g, 'row ' || g FROM generate_series(1, "
                        + n + ") g");
            }
            for (int n = 1; n <= 6; n++) {
                int expected = n;
                List<Received> records = cluster.readUntil("t2.Six" + n, r -> r.size() >= expected);
                assertThat(records).extracting(r -> r.row().get("id").asInt())
                        .containsExactlyElementsOf(java.util.stream.IntStream.rangeClosed(1, n).boxed().toList());
            }
        } finally {
            cluster.connect.deleteConnector("six");
        }
    }

    @Test
    void a_full_export_longer_than_one_poll_is_one_transaction_while_the_task_serves_other_objects() throws Exception {
        int rows = 1000;
        String big = outboxTable("big", "id int PRIMARY KEY, name text");
        String busy = outboxTable("busy", "id int PRIMARY KEY, name text");
        database.execute("INSERT INTO public.big SELECT g, 'row ' || g FROM generate_series(1, " + rows + ") g");
        database.execute("INSERT INTO public.busy SELECT g, 'row ' || g FROM generate_series(1, 3) g");
        Map<String, String> objects = new LinkedHashMap<>(object("Big", big, "id", "FULL"));
        objects.putAll(object("Busy", busy, "id", "FULL"));
        Map<String, String> config = config("t6.", 1, objects);
        config.put("tidemark.objects", "Big,Busy");                       // one task steps both
        config.put("page.size", "50");                                    // Big's export: 20 polls
        int busyRows = 53;
        Thread writer = new Thread(() -> {
            // Diffs of the other object while Big's export is handed out, one version each.
            for (int id = 4; id <= busyRows; id++) {
                database.execute("INSERT INTO public.busy VALUES (" + id + ", 'diff')");
                ConnectTestCluster.sleep(5);
            }
        }, "busy-writer");
        try {
            cluster.start("split", config, 1);
            writer.start();
            cluster.readUntil("t6.Big", r -> r.size() == rows);
            writer.join(60_000);
            database.execute("INSERT INTO public.big VALUES (" + (rows + 1) + ", 'after the export')");

            List<Received> records = cluster.readUntil("t6.Big", r -> r.size() == rows + 1);
            List<Received> export = records.stream()
                    .filter(r -> r.value().get("syncType").asText().equals("FULL")).toList();
            assertThat(export).hasSize(rows);
            assertThat(export).allSatisfy(r -> assertThat(r.headers()).containsEntry("tidemark.pageCount", "20"));
            // One task writes the topic, so a gap between two of its records in a partition is a commit marker.
            Map<Integer, List<Long>> offsets = export.stream().collect(Collectors.groupingBy(Received::partition,
                    Collectors.mapping(Received::offset, Collectors.toList())));
            offsets.forEach((partition, list) -> assertThat(java.util.stream.IntStream.range(1, list.size())
                    .filter(i -> list.get(i) != list.get(i - 1) + 1).mapToObj(i -> list.get(i - 1)).toList())
                    .as("offsets in partition %d of export records a transaction ended after", partition).isEmpty());
            Received diff = records.stream().filter(r -> r.value().get("syncType").asText().equals("DIFF"))
                    .findFirst().orElseThrow();
            List<Long> before = offsets.get(diff.partition());
            assertThat(diff.offset()).as("one commit marker, right after the export's last record")
                    .isEqualTo(before.get(before.size() - 1) + 2);

            List<Received> busyRecords = cluster.readUntil("t6.Busy", r -> r.size() >= busyRows);
            assertThat(busyRecords).extracting(r -> r.row().get("id").asInt())
                    .containsExactlyInAnyOrderElementsOf(java.util.stream.IntStream.rangeClosed(1, busyRows)
                            .boxed().toList());
        } finally {
            writer.join(60_000);
            cluster.connect.deleteConnector("split");
        }
    }

    @Test
    void a_worker_stopped_mid_stream_loses_nothing_and_with_exactly_once_duplicates_nothing() throws Exception {
        String function = outboxTable("orders", "order_id int PRIMARY KEY, note text");
        Map<String, String> config = config("t3.", 1, object("Orders", function, "order_id", "INCREMENTAL"));
        config.put("tidemark.objects", "Orders");
        config.put("page.size", "50");
        int total = 900;
        AtomicInteger written = new AtomicInteger();
        AtomicBoolean stop = new AtomicBoolean();
        try {
            cluster.start("orders", config, 1);
            cluster.readUntil("t3.positions", r -> r.size() == 1);
            Thread writer = new Thread(() -> {
                // Transactions of 1 to 5 rows, so that versions hold several changes.
                try (Connection c = database.dataSource().getConnection(); Statement s = c.createStatement()) {
                    int id = 0;
                    while (id < total && !stop.get()) {
                        int rows = Math.min(1 + id % 5, total - id);
                        s.execute("INSERT INTO public.orders SELECT g, 'n' FROM generate_series(" + (id + 1) + ", "
                                + (id + rows) + ") g");
                        id += rows;
                        written.set(id);
                        Thread.sleep(3);
                    }
                } catch (SQLException | InterruptedException e) {
                    throw new IllegalStateException(e);
                }
            }, "order-writer");
            writer.start();
            ConnectTestCluster.await("a third of the rows written", () -> written.get() > total / 3);
            String before = cluster.workerIdOf("orders", 0);
            cluster.connect.removeWorker(cluster.workerOf("orders", 0));   // mid-stream
            ConnectTestCluster.await("the task running on another worker", () ->
                    cluster.connect.connectorStatus("orders").tasks().get(0).state().equals("RUNNING")
                            && !cluster.workerIdOf("orders", 0).equals(before));
            writer.join(120_000);
            assertThat(written.get()).isEqualTo(total);

            List<Received> records = cluster.readUntil("t3.Orders", r -> r.stream()
                    .map(x -> x.row().get("order_id").asInt()).collect(Collectors.toSet()).size() == total);
            List<Integer> ids = records.stream().map(r -> r.row().get("order_id").asInt()).toList();
            assertThat(new HashSet<>(ids)).hasSize(total);
            assertThat(ids).as("exactly once: no change written twice").hasSize(total).doesNotHaveDuplicates();
        } finally {
            stop.set(true);
            cluster.connect.deleteConnector("orders");
            cluster.connect.addWorker();
        }
    }

    @Test
    void a_transaction_that_captured_first_and_commits_last_is_not_lost() throws Exception {
        String function = outboxTable("late", "id int PRIMARY KEY, name text");
        Map<String, String> config = config("t4.", 1, object("Late", function, "id", "INCREMENTAL"));
        config.put("tidemark.objects", "Late");
        try {
            cluster.start("late", config, 1);
            cluster.readUntil("t4.positions", r -> r.size() == 1);
            try (Connection u = database.dataSource().getConnection();
                 Connection t = database.dataSource().getConnection()) {
                u.setAutoCommit(false);
                t.setAutoCommit(false);
                long uXid = xid(u);                                                    // 1. U takes its xid first
                execute(t, "INSERT INTO public.late VALUES (1, 'T')");                 // 2. T's row captured first
                assertThat(xid(t)).isGreaterThan(uXid);
                execute(u, "INSERT INTO public.late VALUES (2, 'U')");                 // 3. U's row second
                u.commit();
                List<Received> first = cluster.readUntil("t4.Late", r -> r.size() >= 1);  // 4. polled, T open
                assertThat(first).extracting(r -> r.row().get("id").asInt()).containsExactly(2);
                ConnectTestCluster.sleep(1000);                                      // more polls while T is open
                t.commit();                                                            // 5. T commits last
            }
            List<Received> all = cluster.readUntil("t4.Late", r -> r.size() >= 2);
            assertThat(all).extracting(r -> r.row().get("id").asInt()).containsExactly(2, 1);
        } finally {
            cluster.connect.deleteConnector("late");
        }
    }

    @Test
    void a_postgresql_notification_ends_the_poll_wait() {
        String function = outboxTable("woken", "id int PRIMARY KEY, name text");
        Map<String, String> config = config("t5.", 1, object("Woken", function, "id", "INCREMENTAL"));
        config.put("tidemark.objects", "Woken");
        config.put("poll.interval.ms", "600000");                         // ten minutes: only a wake-up can help
        try {
            cluster.start("woken", config, 1);
            cluster.readUntil("t5.positions", r -> r.size() == 1);
            ConnectTestCluster.sleep(1000);                                // the first call after the seed is done
            long began = System.nanoTime();
            database.execute("INSERT INTO public.woken VALUES (1, 'now')");

            List<Received> records = cluster.readUntil("t5.Woken", r -> r.size() == 1);

            assertThat(records.get(0).row().get("id").asInt()).isEqualTo(1);
            assertThat((System.nanoTime() - began) / 1_000_000_000.0).as("seconds from commit to record")
                    .isLessThan(30);
        } finally {
            cluster.connect.deleteConnector("woken");
        }
    }

    private static long xid(Connection c) throws SQLException {
        try (Statement s = c.createStatement(); ResultSet rs = s.executeQuery("SELECT txid_current()")) {
            rs.next();
            return rs.getLong(1);
        }
    }

    private static void execute(Connection c, String sql) throws SQLException {
        try (Statement s = c.createStatement()) {
            s.execute(sql);
        }
    }
}
