package io.tidemark.postgres;

import io.tidemark.postgres.outbox.RandomWriters;
import io.tidemark.sync.Change;
import io.tidemark.sync.InitialSync;
import io.tidemark.sync.JdbcWatermarkStore;
import io.tidemark.sync.Outcome;
import io.tidemark.sync.SyncEngine;
import io.tidemark.sync.SyncType;
import io.tidemark.sync.TrackedObject;
import io.tidemark.sync.spi.WatermarkStore;
import io.tidemark.testing.EmbeddedPostgresTest;
import io.tidemark.testing.RecordingDestination;
import io.tidemark.testing.TestDatabase;
import org.junit.jupiter.api.Test;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.sql.Connection;
import java.sql.ResultSet;
import java.sql.Statement;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.TreeMap;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The randomised multi-writer run of the outbox stress test, on the log-based capture: eight writers run random
 * transactions (inserts, multi-row updates, deletes, key changes; some with a server-side pause; some rolled back on
 * purpose, some by deadlocks and key conflicts) while the engine reads with a small {@code maxRows} and the slot moves
 * with the stored watermark, and the provider is replaced halfway (a restart from the slot). Afterwards the
 * destination holds every committed change and nothing else, replaying them in delivery order gives the table, and
 * nothing is left to read.
 *
 * <p>{@code -Dtidemark.stress.transactions=N} (default 6,000) and {@code -Dtidemark.stress.seed=S} make a longer or a
 * reproducible run; the seed of every run is logged.
 */
@EmbeddedPostgresTest
class PostgresLogicalStressTest {

    private static final Logger LOG = LoggerFactory.getLogger(PostgresLogicalStressTest.class);
    private static final int WRITERS = 8;

    private final TestDatabase database;
    /** Closed before the slot is dropped: the engine does not close a provider, which may be shared. */
    private final List<PostgresLogicalProvider> providers = new ArrayList<>();

    PostgresLogicalStressTest(TestDatabase database) {
        this.database = database;
    }

    @Test
    void the_destination_holds_every_committed_change_and_nothing_else() throws Exception {
        int transactions = Integer.getInteger("tidemark.stress.transactions", 6_000);
        long seed = Long.getLong("tidemark.stress.seed", System.nanoTime());
        LOG.info("Logical capture stress: {} transactions, {} writers, seed {}", transactions, WRITERS, seed);
        database.execute("CREATE TABLE public.lg_stress (id int PRIMARY KEY, tag text NOT NULL, n int NOT NULL)");
        PostgresLogicalCapture capture = PostgresLogicalCapture.forTables("public.lg_stress")
                .slot("tm_lt_stress_" + ProcessHandle.current().pid()).build();
        capture.install(database.dataSource());
        try {
            run(capture, transactions, seed);
        } finally {
            providers.forEach(PostgresLogicalProvider::close);
            capture.uninstall(database.dataSource());
        }
    }

    private void run(PostgresLogicalCapture capture, int transactions, long seed) throws Exception {
        WatermarkStore store = JdbcWatermarkStore.create(database.dataSource());
        RecordingDestination out = new RecordingDestination();
        TrackedObject object = capture.track("Stress").initialSync(InitialSync.INCREMENTAL).maxRows(50)
                .pollInterval(Duration.ofMillis(200));
        SyncEngine engine = engine(capture, store, object, out);
        assertThat(engine.runOnce().get("Stress").outcome()).isEqualTo(Outcome.SEEDED);
        engine.start();

        ExecutorService threads = Executors.newFixedThreadPool(WRITERS);
        List<Future<RandomWriters.Ledger>> writers = new ArrayList<>();
        AtomicLong remaining = new AtomicLong(transactions);
        for (int w = 0; w < WRITERS; w++) {
            int writer = w;
            writers.add(threads.submit(() -> RandomWriters.write(database.dataSource(), "public.lg_stress", writer,
                    new Random(seed + writer), remaining)));
        }
        // Halfway, the engine and its provider go away and new ones take over from the slot and the store.
        while (remaining.get() > transactions / 2) {
            Thread.sleep(20);
        }
        engine.close();
        providers.get(0).close();
        SyncEngine second = engine(capture, store, object, out);
        second.start();

        RandomWriters.Ledger all = RandomWriters.collect(writers);
        List<String> committed = all.committed;
        List<String> rolledBack = all.rolledBack;
        threads.shutdown();
        out.awaitChanges(committed.size(), Duration.ofMinutes(5));
        second.close();
        providers.get(1).close();
        try (SyncEngine after = engine(capture, store, object, out)) {
            assertThat(after.runOnce().get("Stress").outcome()).as("nothing left after catching up")
                    .isIn(Outcome.NO_CHANGES, Outcome.DELIVERED);
            assertThat(out.changes()).as("nothing more than the committed changes (seed %d)", seed)
                    .hasSize(committed.size());
        }
        LOG.info("Logical capture stress: {} commits and {} rollbacks ({} changes) delivered", all.commits,
                all.rollbacks, committed.size());

        assertThat(all.rollbacks).isPositive();
        assertThat(out.batches()).allSatisfy(b -> assertThat(b.syncType()).isEqualTo(SyncType.DIFF));
        List<Change> delivered = out.changes();
        List<String> received = delivered.stream().map(RandomWriters::describe).toList();
        assertThat(received).as("delivered changes vs committed ones (seed %d)", seed)
                .containsExactlyInAnyOrderElementsOf(committed);
        assertThat(received).doesNotContainAnyElementsOf(
                rolledBack.stream().filter(c -> !c.startsWith("D:")).toList());
        assertThat(RandomWriters.replay(delivered)).as("the delivered changes replayed in order give the table"
                + " (seed %d)", seed).isEqualTo(table());
    }

    private SyncEngine engine(PostgresLogicalCapture capture, WatermarkStore store, TrackedObject object,
                              RecordingDestination out) {
        PostgresLogicalProvider provider = PostgresLogicalProvider.builder(capture)
                .connect(database.jdbcUrl(), "postgres", null).watermarks(store)
                .acknowledgeEvery(Duration.ofMillis(200)).build();
        SyncEngine engine = SyncEngine.builder().name("logical-stress").provider(provider).watermarks(store)
                .track(object).destination("out", out).build();
        providers.add(provider);
        return engine;
    }

    private Map<Integer, String> table() throws Exception {
        Map<Integer, String> rows = new TreeMap<>();
        try (Connection c = database.dataSource().getConnection(); Statement s = c.createStatement();
             ResultSet rs = s.executeQuery("SELECT id, tag FROM public.lg_stress")) {
            while (rs.next()) {
                rows.put(rs.getInt(1), rs.getString(2));
            }
        }
        return rows;
    }
}
