package io.tidemark.postgres;

import io.tidemark.sync.Change;
import io.tidemark.sync.InitialSync;
import io.tidemark.sync.JdbcWatermarkStore;
import io.tidemark.sync.Operation;
import io.tidemark.sync.Outcome;
import io.tidemark.sync.SyncEngine;
import io.tidemark.sync.spi.WatermarkStore;
import io.tidemark.testing.EmbeddedPostgresTest;
import io.tidemark.testing.RecordingDestination;
import io.tidemark.testing.TestDatabase;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.OptionalLong;
import java.util.Set;
import java.util.TreeMap;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * A table handed over from {@link PostgresOutbox} to {@link PostgresLogicalCapture} while writers keep writing, by
 * the procedure of the README ("Switching a table from PostgresOutbox to log-based capture"): the logical object is
 * seeded, {@link PostgresOutbox#committedVersion} is read, the outbox's engine runs until its watermark reaches it,
 * and the outbox is dropped. Every committed change must reach one destination or the other (or both), and no
 * rolled-back change either.
 */
@EmbeddedPostgresTest
class SwitchToLogicalCaptureTest {

    private static final Duration WAIT = Duration.ofSeconds(30);

    private final TestDatabase database;
    private final WatermarkStore store;
    private final LogicalCaptures captures;

    SwitchToLogicalCaptureTest(TestDatabase database) {
        this.database = database;
        this.store = JdbcWatermarkStore.create(database.dataSource());
        this.captures = new LogicalCaptures(database, store);
    }

    @AfterEach
    void close() throws Exception {
        captures.close();
    }

    @Test
    void no_committed_change_is_missed_and_a_destination_ends_as_the_table_when_it_moves_to_the_log_while_written()
            throws Exception {
        database.execute("CREATE TABLE public.sw_items (id int PRIMARY KEY, n bigint NOT NULL)");
        PostgresOutbox outbox = PostgresOutbox.forTable("public.sw_items").build();
        outbox.install(database.dataSource());
        // One destination for both, as in production: it must end as the table is, applying changes by key in the
        // order they arrive.
        RecordingDestination shared = new RecordingDestination();
        SyncEngine outboxEngine = SyncEngine.builder().name("switch-outbox")
                .provider(PostgresProvider.create(database.dataSource())).watermarks(store)
                .track(outbox.track("ItemsOutbox").initialSync(InitialSync.INCREMENTAL)
                        .pollInterval(Duration.ofMillis(100)))
                .destination("out", shared).build();
        captures.closeLater(outboxEngine);
        assertThat(outboxEngine.runOnce().get("ItemsOutbox").outcome()).isEqualTo(Outcome.SEEDED);

        Writers writers = new Writers();
        writers.start(3);
        writers.awaitCommits(300);
        // The outbox's engine is driven cycle by cycle here, and lags the writers by a few hundred changes when the
        // hand-over starts: stopping it before its watermark reaches the hand-over version would lose them.
        outboxEngine.runOnce();
        writers.awaitCommits(writers.committed() + 300);

        // The hand-over, as the README gives it.
        PostgresLogicalCapture capture = captures.install(PostgresLogicalCapture.forTables("public.sw_items"));
        PostgresLogicalProvider provider = captures.provider(captures.builder(capture));
        SyncEngine logicalEngine = SyncEngine.builder().name("switch-logical").provider(provider).watermarks(store)
                .track(capture.track("ItemsLogical", "public.sw_items").initialSync(InitialSync.INCREMENTAL)
                        .pollInterval(Duration.ofMillis(100)))
                .destination("out", shared).build();
        captures.closeLater(logicalEngine);
        assertThat(logicalEngine.runOnce().get("ItemsLogical").outcome()).isEqualTo(Outcome.SEEDED);
        long handOver = outbox.committedVersion(database.dataSource());

        runUntilStored(outboxEngine, "ItemsOutbox", handOver);
        int fromOutbox = shared.changes().size();
        outboxEngine.close();
        outbox.uninstall(database.dataSource()); // while the writers write
        logicalEngine.start(); // only now: it replays, in commit order, everything after its seed
        writers.awaitCommits(writers.committed() + 300);
        writers.stop();

        Set<String> delivered = new HashSet<>();
        long deadline = System.nanoTime() + WAIT.toNanos();
        while (!delivered.containsAll(writers.committedChanges()) && System.nanoTime() < deadline) {
            Thread.sleep(50);
            delivered.clear();
            shared.changes().forEach(c -> delivered.add(describe(c)));
        }
        Set<String> missed = new HashSet<>(writers.committedChanges());
        missed.removeAll(delivered);
        assertThat(missed).as("committed changes neither capture delivered").isEmpty();
        assertThat(delivered).as("rolled-back changes delivered").doesNotContainAnyElementsOf(writers.rolledBack());
        assertThat(fromOutbox).as("the outbox delivered before the hand-over").isPositive();
        assertThat(shared.changes().size()).as("the log delivered after it").isGreaterThan(fromOutbox);
        Map<Integer, Long> applied = new TreeMap<>();
        for (Change c : shared.changes()) {
            int id = c.fields().get("id").asInt();
            if (c.operation().orElseThrow() == Operation.DELETE) {
                applied.remove(id);
            } else {
                applied.put(id, c.fields().get("n").asLong());
            }
        }
        assertThat(applied).as("the destination, applying by key in arrival order, ends as the table")
                .isEqualTo(rows());
        assertThat(query("SELECT count(*) FROM pg_catalog.pg_trigger t JOIN pg_catalog.pg_class c"
                + " ON c.oid = t.tgrelid WHERE c.relname = 'sw_items' AND NOT t.tgisinternal"))
                .as("the outbox's triggers are gone").isZero();
    }

    @Test
    void the_hand_over_version_covers_a_change_committed_while_an_older_transaction_is_still_running()
            throws Exception {
        database.execute("CREATE TABLE public.sw_older (id int PRIMARY KEY)");
        PostgresOutbox outbox = PostgresOutbox.forTable("public.sw_older").build();
        outbox.install(database.dataSource());
        try (Connection older = database.dataSource().getConnection()) {
            older.setAutoCommit(false);
            try (PreparedStatement s = older.prepareStatement("SELECT pg_current_xact_id()")) {
                s.executeQuery().close(); // an id taken and held: the horizon stays below it
            }
            database.execute("INSERT INTO public.sw_older VALUES (1)");
            long captured = query("SELECT max(version) FROM " + outbox.outboxTable());
            long horizon = query("SELECT pg_snapshot_xmin(pg_current_snapshot())::text::bigint");

            assertThat(horizon).as("the older transaction holds the horizon below the change").isLessThan(captured);
            assertThat(outbox.committedVersion(database.dataSource())).isGreaterThanOrEqualTo(captured);
            older.rollback();
        }
    }

    /** {@code I:id:n}, {@code U:id:n} or {@code D:id}: each committed write is one of these, none twice. */
    private static String describe(Change change) {
        String op = change.operation().orElseThrow().code();
        Object id = change.fields().get("id");
        return op.equals("D") ? "D:" + id : op + ":" + id + ":" + change.fields().get("n");
    }

    /** The outbox's side of the hand-over: cycles until the object's stored watermark reaches {@code atLeast}. */
    private void runUntilStored(SyncEngine engine, String name, long atLeast) throws InterruptedException {
        long deadline = System.nanoTime() + WAIT.toNanos();
        while (stored(name) < atLeast) {
            if (System.nanoTime() > deadline) {
                throw new AssertionError(name + " did not store a watermark of " + atLeast + " within " + WAIT
                        + " (stored " + stored(name) + ")");
            }
            engine.runOnce();
            Thread.sleep(20);
        }
    }

    private long stored(String name) {
        return store.load(name).map(s -> s.version()).orElse(OptionalLong.empty()).orElse(-1);
    }

    private Map<Integer, Long> rows() throws SQLException {
        Map<Integer, Long> rows = new TreeMap<>();
        try (Connection c = database.dataSource().getConnection();
             PreparedStatement s = c.prepareStatement("SELECT id, n FROM public.sw_items");
             ResultSet rs = s.executeQuery()) {
            while (rs.next()) {
                rows.put(rs.getInt(1), rs.getLong(2));
            }
        }
        return rows;
    }

    private long query(String sql) throws SQLException {
        try (Connection c = database.dataSource().getConnection(); PreparedStatement s = c.prepareStatement(sql);
             ResultSet rs = s.executeQuery()) {
            rs.next();
            return rs.getLong(1);
        }
    }

    /**
     * Writers of single-row transactions: inserts of new keys, updates and deletes of random keys, one in ten rolled
     * back; each committed write is recorded as {@link #describe} renders its change. {@code n} is unique across
     * all writes, so every change can be told from every other.
     */
    private final class Writers {
        private final AtomicBoolean running = new AtomicBoolean(true);
        private final AtomicInteger nextId = new AtomicInteger();
        private final AtomicLong nextN = new AtomicLong();
        private final ConcurrentLinkedQueue<String> committed = new ConcurrentLinkedQueue<>();
        private final ConcurrentLinkedQueue<String> rolledBack = new ConcurrentLinkedQueue<>();
        private final ConcurrentLinkedQueue<Throwable> failures = new ConcurrentLinkedQueue<>();
        private final List<Thread> threads = new ArrayList<>();

        void start(int count) {
            for (int i = 0; i < count; i++) {
                Thread thread = new Thread(this::write, "switch-writer-" + i);
                threads.add(thread);
                thread.start();
            }
        }

        private void write() {
            try (Connection c = database.dataSource().getConnection();
                 PreparedStatement insert = c.prepareStatement("INSERT INTO public.sw_items VALUES (?, ?)");
                 PreparedStatement update = c.prepareStatement(
                         "UPDATE public.sw_items SET n = ? WHERE id = ? RETURNING id");
                 PreparedStatement delete = c.prepareStatement("DELETE FROM public.sw_items WHERE id = ? RETURNING id")) {
                c.setAutoCommit(false);
                ThreadLocalRandom random = ThreadLocalRandom.current();
                while (running.get()) {
                    long n = nextN.incrementAndGet();
                    int pick = random.nextInt(10);
                    String change;
                    if (pick < 5 || nextId.get() < 10) {
                        int id = nextId.incrementAndGet();
                        insert.setInt(1, id);
                        insert.setLong(2, n);
                        insert.executeUpdate();
                        change = "I:" + id + ":" + n;
                    } else if (pick < 8) {
                        int id = 1 + random.nextInt(nextId.get());
                        update.setLong(1, n);
                        update.setInt(2, id);
                        change = returned(update) ? "U:" + id + ":" + n : null;
                    } else {
                        int id = 1 + random.nextInt(nextId.get());
                        delete.setInt(1, id);
                        change = returned(delete) ? "D:" + id : null;
                    }
                    if (random.nextInt(10) == 0) {
                        c.rollback();
                        if (change != null && !change.startsWith("D:")) {
                            rolledBack.add(change); // a rolled-back delete's key may be deleted later for real
                        }
                    } else {
                        c.commit();
                        if (change != null) {
                            committed.add(change);
                        }
                    }
                }
            } catch (SQLException | RuntimeException e) {
                failures.add(e);
            }
        }

        private boolean returned(PreparedStatement statement) throws SQLException {
            try (ResultSet rs = statement.executeQuery()) {
                return rs.next();
            }
        }

        int committed() {
            return committed.size();
        }

        void awaitCommits(int count) throws InterruptedException {
            long deadline = System.nanoTime() + WAIT.toNanos();
            while (committed.size() < count && failures.isEmpty()) {
                if (System.nanoTime() > deadline) {
                    throw new AssertionError("the writers committed " + committed.size() + " of " + count);
                }
                Thread.sleep(5);
            }
            assertThat(failures).as("writer failures").isEmpty();
        }

        void stop() throws InterruptedException {
            running.set(false);
            for (Thread thread : threads) {
                thread.join(WAIT.toMillis());
            }
            assertThat(failures).as("writer failures").isEmpty();
        }

        Set<String> committedChanges() {
            return Set.copyOf(committed);
        }

        Set<String> rolledBack() {
            return Set.copyOf(rolledBack);
        }
    }
}
