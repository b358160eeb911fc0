package io.tidemark.postgres.outbox;

import io.tidemark.postgres.CaptureShape;
import io.tidemark.postgres.PostgresProvider;
import io.tidemark.sync.Change;
import io.tidemark.sync.InitialSync;
import io.tidemark.sync.JdbcWatermarkStore;
import io.tidemark.sync.ObjectReport;
import io.tidemark.sync.Outcome;
import io.tidemark.sync.SyncEngine;
import io.tidemark.sync.TrackedObject;
import io.tidemark.sync.spi.SyncListener;
import io.tidemark.sync.spi.WatermarkStore;
import io.tidemark.postgres.TrimResult;
import io.tidemark.testing.EmbeddedPostgresTest;
import io.tidemark.testing.PooledDataSource;
import io.tidemark.testing.RecordingDestination;
import io.tidemark.testing.TestDatabase;
import org.junit.jupiter.api.Test;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.TreeMap;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.Semaphore;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Eight writers run random transactions (inserts, multi-row updates, deletes, key changes; random size; some with a
 * server-side pause; some rolled back on purpose, some by deadlocks and key conflicts) while the engine polls with
 * maxRows and wakes on notifications, and the outbox is trimmed below the engine's watermark now and then.
 * Afterwards the destination holds exactly the committed changes, as a multiset, all of them diffs (a trim that
 * went too far would have forced a full snapshot), and replaying them in delivery order gives the table's state.
 *
 * <p>{@code -Dtidemark.stress.transactions=N} (default 20,000) and {@code -Dtidemark.stress.seed=S} make a longer
 * or a reproducible run; the seed of every run is logged.
 */
@EmbeddedPostgresTest
class OutboxStressTest {

    private static final Logger LOG = LoggerFactory.getLogger(OutboxStressTest.class);
    private static final int WRITERS = 8;

    private final TestDatabase database;

    OutboxStressTest(TestDatabase database) {
        this.database = database;
    }

    /** The capture shape of every outbox this class installs; a subclass runs every test on another one. */
    CaptureShape shape() {
        return CaptureShape.FULL_IMAGE;
    }

    @Test
    void the_destination_holds_exactly_the_committed_changes() throws Exception {
        int transactions = Integer.getInteger("tidemark.stress.transactions", 20_000);
        long seed = Long.getLong("tidemark.stress.seed", System.nanoTime());
        LOG.info("Outbox stress: {} transactions, {} writers, seed {}", transactions, WRITERS, seed);
        OutboxTables t = OutboxTables.create(shape(), database, "stress", "id int PRIMARY KEY, tag text NOT NULL, n int NOT NULL");

        // The engine's connections come from a pool, as in an application: the test measures the outbox, not
        // connection set-up.
        PooledDataSource pool = PooledDataSource.of(database.dataSource(), 6);
        RecordingDestination out = new RecordingDestination();
        WatermarkStore store = JdbcWatermarkStore.create(pool);
        TrackedObject object = t.outbox.track("Stress").initialSync(InitialSync.INCREMENTAL).maxRows(50)
                .pollInterval(Duration.ofMillis(200));
        AtomicInteger cycles = new AtomicInteger();
        AtomicInteger fullPages = new AtomicInteger();
        Semaphore cycled = new Semaphore(0);
        SyncEngine engine = SyncEngine.builder().name("stress")
                .provider(PostgresProvider.create(pool))
                .watermarks(store)
                .track(object)
                .destination("out", out)
                .listener(new SyncListener() {
                    @Override
                    public void onReport(ObjectReport report) {
                        cycles.incrementAndGet();
                        cycled.release();
                        if (report.fullBatch()) {
                            fullPages.incrementAndGet();
                        }
                    }
                })
                .build();
        assertThat(engine.runOnce().get("Stress").outcome()).isEqualTo(Outcome.SEEDED);
        engine.start();

        long started = System.nanoTime();
        ExecutorService threads = Executors.newFixedThreadPool(WRITERS + 1);
        List<Future<RandomWriters.Ledger>> writers = new ArrayList<>();
        AtomicLong remaining = new AtomicLong(transactions);
        for (int w = 0; w < WRITERS; w++) {
            int writer = w;
            writers.add(threads.submit(() -> RandomWriters.write(t.dataSource(), "public." + t.table, writer,
                    new Random(seed + writer), remaining)));
        }
        AtomicLong trimmed = new AtomicLong();
        Future<?> trimmer = threads.submit(() -> {
            while (remaining.get() > 0) {
                // About every 20 cycles of the engine: a trim races the engine's own progress.
                if (cycled.tryAcquire(20, 1, TimeUnit.SECONDS)) {
                    TrimResult r = t.outbox.trim(pool, engine);
                    trimmed.addAndGet(r.deletedChanges());
                }
            }
            return null;
        });
        RandomWriters.Ledger all = RandomWriters.collect(writers);
        List<String> committed = all.committed;
        List<String> rolledBack = all.rolledBack;
        int commits = all.commits;
        int rollbacks = all.rollbacks;
        trimmer.get(1, TimeUnit.MINUTES);
        threads.shutdown();
        long written = System.nanoTime();

        boolean keys = shape() == CaptureShape.KEYS;
        if (keys) {
            // Net changes: fewer than committed, and a key read early (its row newer than its page) comes again.
            // Caught up once the stored watermark passed every captured change.
            long deadline = System.nanoTime() + Duration.ofMinutes(5).toNanos();
            long lastCaptured = t.scalar("SELECT coalesce(max(version), 0) FROM " + t.outbox.outboxTable());
            while (engine.status("Stress").stored().version().orElse(0) < lastCaptured
                    && System.nanoTime() < deadline) {
                Thread.sleep(50);
            }
            assertThat(engine.status("Stress").stored().version().orElse(0))
                    .as("the engine caught up with every captured change within 5 minutes (seed %d)", seed)
                    .isGreaterThanOrEqualTo(lastCaptured);
        } else {
            out.awaitChanges(committed.size(), Duration.ofMinutes(5));
        }
        engine.close();
        long caughtUp = System.nanoTime();
        try (SyncEngine after = SyncEngine.builder().name("stress-after")
                .provider(PostgresProvider.builder(pool).listen(false).build())
                .watermarks(store).track(object).destination("out", out).build()) {
            assertThat(after.runOnce().get("Stress").outcome()).as("nothing left after catching up")
                    .isEqualTo(Outcome.NO_CHANGES);
        }
        pool.close();
        List<Change> delivered = out.changes();
        LOG.info("Outbox stress: {} commits and {} rollbacks ({} changes) written in {} ms; the engine caught up {} ms"
                        + " later in {} cycles, {} of them full (maxRows 50); {} changes trimmed meanwhile", commits,
                rollbacks, committed.size(), (written - started) / 1_000_000, (caughtUp - written) / 1_000_000,
                cycles.get(), fullPages.get(), trimmed.get());

        assertThat(commits + rollbacks).isEqualTo(transactions);
        assertThat(rollbacks).isPositive();
        assertThat(out.batches()).allSatisfy(b -> assertThat(b.syncType()).isEqualTo(io.tidemark.sync.SyncType.DIFF));
        List<String> received = delivered.stream().map(RandomWriters::describe).toList();
        // Inserts and updates carry a tag unique to their statement; deletes carry only the key, so they are counted
        // by the multiset comparison rather than matched one by one.
        List<String> rolledBackTagged = rolledBack.stream().filter(c -> !c.startsWith("D:")).toList();
        assertThat(received).as("nothing delivered from a rolled-back transaction (seed %d)", seed)
                .doesNotContainAnyElementsOf(rolledBackTagged);
        if (keys) {
            // One net change per key and read, the row as read: every insert or update delivered carries the tag
            // of a committed statement, a key's changes come with versions that never go down, and the replay below
            // ends on the table.
            java.util.Set<String> committedTags = committed.stream().filter(c -> !c.startsWith("D:"))
                    .map(c -> c.substring(c.lastIndexOf(':') + 1)).collect(java.util.stream.Collectors.toSet());
            assertThat(received.stream().filter(c -> !c.startsWith("D:")).map(c -> c.substring(c.lastIndexOf(':') + 1)))
                    .as("every row image delivered was committed (seed %d)", seed).allMatch(committedTags::contains);
            assertThat(received.size()).as("net changes are at most the committed ones").isLessThanOrEqualTo(
                    committed.size());
            Map<Integer, Long> lastVersion = new HashMap<>();
            for (Change c : delivered) {
                long version = c.version().orElseThrow();
                Long before = lastVersion.put(c.fields().get("id").asInt(), version);
                assertThat(before == null || before <= version).as("versions of key %s go up (seed %d)",
                        c.fields().get("id"), seed).isTrue();
            }
        } else {
            assertThat(received).as("delivered changes vs committed ones (seed %d)", seed)
                    .containsExactlyInAnyOrderElementsOf(committed);
        }
        assertThat(RandomWriters.replay(delivered)).as("the delivered changes replayed in order give the table (seed %d)", seed)
                .isEqualTo(table(t));
    }

    private static Map<Integer, String> table(OutboxTables t) {
        Map<Integer, String> rows = new TreeMap<>();
        t.query("SELECT id, tag FROM public." + t.table, rs -> rows.put(rs.getInt(1), rs.getString(2)));
        return rows;
    }
}
