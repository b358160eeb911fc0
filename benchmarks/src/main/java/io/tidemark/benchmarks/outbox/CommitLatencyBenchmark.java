package io.tidemark.benchmarks.outbox;

import io.tidemark.postgres.PostgresOutbox;
import io.tidemark.postgres.PostgresProvider;
import io.tidemark.sync.Change;
import io.tidemark.sync.ChangeBatch;
import io.tidemark.sync.InitialSync;
import io.tidemark.sync.JdbcWatermarkStore;
import io.tidemark.sync.SyncEngine;
import io.tidemark.testing.EmbeddedPostgresServer;
import io.tidemark.testing.PooledDataSource;
import io.tidemark.testing.TestDatabase;

import javax.sql.DataSource;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Random;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;

/**
 * (c) Commit-to-delivery latency on an idle engine, with and without LISTEN, in the same run. One row is committed at
 * a time, at random gaps; the latency of a row runs from just before its INSERT (auto-commit) is sent to the moment
 * the destination receives it. Both engines poll every second as the safety net; without LISTEN that interval is
 * what the latency is made of. The engine's connections come from a pool, as in an application, and its watermarks
 * are stored in the database.
 *
 * <pre>java -cp benchmarks/target/benchmarks.jar io.tidemark.benchmarks.outbox.CommitLatencyBenchmark [commits] [pollMillis]</pre>
 */
public final class CommitLatencyBenchmark {

    private CommitLatencyBenchmark() {
    }

    public static void main(String[] args) throws Exception {
        int commits = args.length > 0 ? Integer.parseInt(args[0]) : 200;
        Duration poll = Duration.ofMillis(args.length > 1 ? Long.parseLong(args[1]) : 1000);
        try (TestDatabase database = EmbeddedPostgresServer.shared().createDatabase();
             PooledDataSource pool = PooledDataSource.of(database.dataSource(), 8)) {
            DataSource ds = database.dataSource();
            BenchDb.execute(ds, "CREATE TABLE public.latency (id bigint PRIMARY KEY, note text NOT NULL)");
            PostgresOutbox outbox = PostgresOutbox.forTable("public.latency").build();
            outbox.install(ds);

            List<Double> listen = new ArrayList<>();
            List<Double> polling = new ArrayList<>();
            // Alternate blocks of 20 commits between the two engines, so that machine noise hits both alike.
            long nextId = 1;
            for (int block = 0; block < commits / 20; block++) {
                nextId = measure(pool, ds, outbox, true, poll, 20, nextId, block == 0 ? null : listen);
                nextId = measure(pool, ds, outbox, false, poll, 20, nextId, block == 0 ? null : polling);
            }
            System.out.printf(Locale.ROOT, "%nCommit to delivery, %d commits each (first block of each discarded),"
                    + " poll interval %d ms%n", listen.size(), poll.toMillis());
            print("with LISTEN", listen);
            print("polling only", polling);
        }
    }

    private static void print(String label, List<Double> millis) {
        System.out.printf(Locale.ROOT, "  %-13s median %7.1f ms   p90 %7.1f ms   p99 %7.1f ms   max %7.1f ms%n", label,
                BenchDb.median(millis), BenchDb.quantile(millis, 0.90), BenchDb.quantile(millis, 0.99),
                BenchDb.quantile(millis, 1.0));
    }

    /** Starts an engine, commits {@code count} rows one at a time, records their latencies, closes the engine. */
    private static long measure(DataSource pool, DataSource ds, PostgresOutbox outbox, boolean listen, Duration poll,
                                int count, long firstId, List<Double> into) throws Exception {
        Map<Long, Long> delivered = new ConcurrentHashMap<>();
        CountDownLatch arrived = new CountDownLatch(count);
        String name = listen ? "Listen" : "Poll";
        try (SyncEngine engine = SyncEngine.builder().name(name.toLowerCase(Locale.ROOT))
                .provider(PostgresProvider.builder(pool).listen(listen).build())
                .watermarks(JdbcWatermarkStore.create(pool))
                .track(outbox.track(name).initialSync(InitialSync.INCREMENTAL).pollInterval(poll))
                .destination("timer", (ChangeBatch batch) -> {
                    long now = System.nanoTime();
                    for (Change c : batch.changes()) {
                        long id = c.fields().get("id").asLong();
                        if (id >= firstId && delivered.putIfAbsent(id, now) == null) {
                            arrived.countDown();
                        }
                    }
                })
                .build()) {
            engine.reset(name);
            engine.runOnce(); // seed: later changes only
            engine.start();
            Random random = new Random(firstId);
            Map<Long, Long> sent = new ConcurrentHashMap<>();
            try (Connection c = ds.getConnection();
                 PreparedStatement insert = c.prepareStatement("INSERT INTO public.latency VALUES (?, 'x')")) {
                Thread.sleep(300); // the listener connects
                for (long id = firstId; id < firstId + count; id++) {
                    Thread.sleep(50 + random.nextInt(250)); // idle between commits, at a random phase of the poll
                    insert.setLong(1, id);
                    sent.put(id, System.nanoTime());
                    insert.executeUpdate();
                }
            }
            if (!arrived.await(60, TimeUnit.SECONDS)) {
                throw new IllegalStateException(name + ": only " + delivered.size() + " of " + count + " rows arrived");
            }
            if (into != null) {
                for (Map.Entry<Long, Long> e : sent.entrySet()) {
                    into.add((delivered.get(e.getKey()) - e.getValue()) / 1e6);
                }
            }
        }
        return firstId + count;
    }
}
