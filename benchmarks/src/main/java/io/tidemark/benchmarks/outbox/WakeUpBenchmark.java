package io.tidemark.benchmarks.outbox;

import io.tidemark.postgres.PostgresOutbox;
import io.tidemark.postgres.PostgresProvider;
import io.tidemark.sync.Change;
import io.tidemark.sync.ChangeBatch;
import io.tidemark.sync.InMemoryWatermarkStore;
import io.tidemark.sync.InitialSync;
import io.tidemark.sync.SyncEngine;
import io.tidemark.testing.EmbeddedPostgresServer;
import io.tidemark.testing.PooledDataSource;
import io.tidemark.testing.TestDatabase;

import javax.sql.DataSource;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;

/**
 * What wake-ups cost the writers, and what they buy the reader, in one run. Three tables with the same outbox but for
 * the wake-up: {@code armed} (the default: the capture notifies only while a reader waits), {@code always} (the
 * capture before armed wake-ups: {@code pg_notify} on every capturing statement) and {@code off}
 * ({@code notifications(false)}).
 *
 * <ul>
 *   <li>Throughput: {@code clients} connections each INSERT one row per auto-committed transaction for
 *       {@code seconds}, table by table, in {@code rounds} rounds. Each table is read meanwhile by a running engine
 *       ({@code armed} and {@code always} LISTEN, {@code off} polls every second), as in an application.</li>
 *   <li>Latency: one writer commits 200 rows a second into {@code armed}; each row's latency runs from just before
 *       its INSERT to the destination receiving it.</li>
 * </ul>
 *
 * <p>With {@code no-reader} as the fourth argument, no engine runs during the throughput rounds (as pgbench measures
 * the writers alone): an armed outbox's flag is then cleared by the first write and never set again.
 *
 * <pre>java -cp benchmarks/target/benchmarks.jar io.tidemark.benchmarks.outbox.WakeUpBenchmark [clients] [seconds] [rounds] [no-reader]</pre>
 */
public final class WakeUpBenchmark {

    private static final String COLUMNS = "(id bigint PRIMARY KEY, sent bigint NOT NULL, note text NOT NULL)";

    private WakeUpBenchmark() {
    }

    public static void main(String[] args) throws Exception {
        int clients = args.length > 0 ? Integer.parseInt(args[0]) : 8;
        int seconds = args.length > 1 ? Integer.parseInt(args[1]) : 5;
        int rounds = args.length > 2 ? Integer.parseInt(args[2]) : 3;
        boolean readers = args.length <= 3 || !args[3].equals("no-reader");
        try (TestDatabase database = EmbeddedPostgresServer.shared().createDatabase();
             PooledDataSource pool = PooledDataSource.of(database.dataSource(), 8)) {
            DataSource ds = database.dataSource();
            Map<String, PostgresOutbox> outboxes = new LinkedHashMap<>();
            for (String variant : List.of("armed", "always", "off")) {
                BenchDb.execute(ds, "CREATE TABLE public." + variant + " " + COLUMNS);
                PostgresOutbox outbox = PostgresOutbox.forTable("public." + variant)
                        .notifications(!variant.equals("off")).build();
                outbox.install(ds);
                outboxes.put(variant, outbox);
            }
            BenchDb.execute(ds, notifyAlways(outboxes.get("always").script(ds)));

            Map<String, List<Double>> rates = new LinkedHashMap<>();
            outboxes.keySet().forEach(v -> rates.put(v, new ArrayList<>()));
            AtomicLong ids = new AtomicLong();
            List<Map.Entry<String, PostgresOutbox>> order = new ArrayList<>(outboxes.entrySet());
            for (int round = 0; round < rounds; round++) {
                // Each round starts with the next table, so that a drift in the machine's load hits all alike.
                for (int i = 0; i < order.size(); i++) {
                    Map.Entry<String, PostgresOutbox> e = order.get((round + i) % order.size());
                    try (SyncEngine engine = readers ? engine(pool, e.getKey(), e.getValue(),
                            !e.getKey().equals("off"), batch -> { }) : null) {
                        long flagWritesBefore = flagWrites(ds, e.getKey());
                        double rate = write(ds, e.getKey(), clients, Duration.ofSeconds(seconds), ids);
                        rates.get(e.getKey()).add(rate);
                        System.out.printf(Locale.ROOT, "round %d  %-6s %9.0f commits/s%s%n", round + 1, e.getKey(), rate,
                                e.getKey().equals("armed") ? String.format(Locale.ROOT, "   (flag set or cleared %d"
                                        + " times: half of them a notifying commit)",
                                        flagWrites(ds, e.getKey()) - flagWritesBefore) : "");
                    }
                }
            }
            System.out.printf(Locale.ROOT, "%nSingle-row INSERT, %d clients, %d s per table and round, %d rounds"
                    + " (median of rounds), %s:%n", clients, seconds, rounds,
                    readers ? "each table read by a running engine" : "no reader");
            double off = BenchDb.median(rates.get("off"));
            for (Map.Entry<String, List<Double>> e : rates.entrySet()) {
                double median = BenchDb.median(e.getValue());
                System.out.printf(Locale.ROOT, "  %-6s %9.0f commits/s   %.2f of off%n", e.getKey(), median,
                        median / off);
            }
            latency(pool, ds, outboxes.get("armed"), ids);
        }
    }

    /** Updates of the table's wake-up flag so far (the statistics lag by up to a second; -1 without a flag). */
    private static long flagWrites(DataSource ds, String table) throws Exception {
        Thread.sleep(1_000);
        return BenchDb.scalar(ds, "SELECT COALESCE((SELECT n_tup_upd FROM pg_stat_user_tables WHERE relname = '"
                + table + "_outbox_wakeup'), -1)");
    }

    /** The capture of the version before armed wake-ups: every capturing statement notifies. */
    private static String notifyAlways(String script) {
        int start = script.indexOf("            IF pg_catalog.current_setting('transaction_isolation')");
        if (start < 0) {
            throw new IllegalStateException("the capture has no armed wake-up to replace: the generated capture"
                    + " function changed, adapt WakeUpBenchmark.notifyAlways to it");
        }
        String notify = script.substring(script.indexOf("PERFORM pg_catalog.pg_notify(", start));
        notify = notify.substring(0, notify.indexOf(';') + 1);
        String end = "\n            END IF;\n"; // the block's own END IF, at its indentation
        String armed = script.substring(start, script.indexOf(end, start) + end.length() - 1);
        String capture = script.substring(script.indexOf("CREATE OR REPLACE FUNCTION \"public\".\"always_outbox_capture\""),
                script.indexOf("$capture$;") + "$capture$;".length());
        return capture.replace(armed, "            " + notify);
    }

    private static SyncEngine engine(DataSource pool, String name, PostgresOutbox outbox, boolean listen,
                                     io.tidemark.sync.spi.Destination destination) {
        SyncEngine engine = SyncEngine.builder().name(name)
                .provider(PostgresProvider.builder(pool).listen(listen).build())
                .watermarks(InMemoryWatermarkStore.create())
                .track(outbox.track(name).initialSync(InitialSync.INCREMENTAL).maxRows(5_000)
                        .pollInterval(Duration.ofSeconds(1)))
                .destination("out", destination)
                .build();
        engine.start();
        return engine;
    }

    private static double write(DataSource ds, String table, int clients, Duration duration, AtomicLong ids)
            throws Exception {
        AtomicBoolean stop = new AtomicBoolean();
        AtomicLong commits = new AtomicLong();
        List<Thread> threads = new ArrayList<>();
        CountDownLatch ready = new CountDownLatch(clients);
        for (int i = 0; i < clients; i++) {
            Thread t = new Thread(() -> {
                try (Connection c = ds.getConnection();
                     PreparedStatement s = c.prepareStatement("INSERT INTO public." + table + " VALUES (?, 0, 'x')")) {
                    ready.countDown();
                    while (!stop.get()) {
                        s.setLong(1, ids.incrementAndGet());
                        s.executeUpdate();
                        commits.incrementAndGet();
                    }
                } catch (Exception e) {
                    throw new IllegalStateException(e);
                }
            });
            t.start();
            threads.add(t);
        }
        ready.await();
        Thread.sleep(500); // warm-up, not counted
        long from = commits.get();
        long start = System.nanoTime();
        Thread.sleep(duration.toMillis());
        long done = commits.get() - from;
        double rate = done / ((System.nanoTime() - start) / 1e9);
        stop.set(true);
        for (Thread t : threads) {
            t.join();
        }
        return rate;
    }

    private static void latency(DataSource pool, DataSource ds, PostgresOutbox outbox, AtomicLong ids)
            throws Exception {
        int count = 2_000;
        List<Double> millis = new CopyOnWriteArrayList<>();
        long firstId = ids.get() + 1;
        CountDownLatch arrived = new CountDownLatch(count);
        try (SyncEngine engine = engine(pool, "armed", outbox, true, (ChangeBatch batch) -> {
            long now = System.nanoTime();
            for (Change c : batch.changes()) {
                if (c.fields().get("id").asLong() >= firstId) {
                    millis.add((now - c.fields().get("sent").asLong()) / 1e6);
                    arrived.countDown();
                }
            }
        }); Connection c = ds.getConnection();
             PreparedStatement insert = c.prepareStatement("INSERT INTO public.armed VALUES (?, ?, 'x')")) {
            Thread.sleep(1_000); // seeded, listening, armed
            long next = System.nanoTime();
            for (int i = 0; i < count; i++) {
                next += 5_000_000; // 200 commits a second
                long wait = next - System.nanoTime();
                if (wait > 0) {
                    TimeUnit.NANOSECONDS.sleep(wait);
                }
                insert.setLong(1, firstId + i);
                insert.setLong(2, System.nanoTime());
                insert.executeUpdate();
            }
            if (!arrived.await(60, TimeUnit.SECONDS)) {
                throw new IllegalStateException("only " + millis.size() + " of " + count + " rows arrived");
            }
        }
        System.out.printf(Locale.ROOT, "%nCommit to delivery, armed wake-ups, 200 commits/s, %d commits:"
                        + " median %.1f ms   p90 %.1f ms   p99 %.1f ms   max %.1f ms%n", count, BenchDb.median(millis),
                BenchDb.quantile(millis, 0.90), BenchDb.quantile(millis, 0.99), BenchDb.quantile(millis, 1.0));
    }
}
