package io.tidemark.benchmarks.capture;

import io.tidemark.postgres.PostgresLogicalCapture;
import io.tidemark.postgres.PostgresLogicalProvider;
import io.tidemark.sync.ChangeBatch;
import io.tidemark.sync.SyncType;

import java.sql.Connection;
import java.sql.PreparedStatement;
import java.time.Instant;
import java.time.temporal.ChronoUnit;
import java.util.Locale;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.UnaryOperator;

/**
 * What one large transaction costs the log-based capture's process: the heap it retains while the stream decodes the
 * transaction and the engine delivers it, and how long the delivery takes from the commit. Two runs on one server
 * (at {@code wal_level = logical}), each with a slot of its own and the table emptied before it:
 * <ol>
 *   <li><b>held whole</b>, the baseline: {@code maxTransactionChanges} above the transaction's size, so the provider
 *   holds every change until the commit and the readers have stored past them (the behaviour before the limit);</li>
 *   <li><b>the default limits</b> (200,000 changes, 128 MiB): past them the table's changes in that transaction are
 *   let go and the object reads the table whole after the commit ({@code ReasonCode} 3).</li>
 * </ol>
 * The retained heap is sampled every 250 ms after a full collection ({@code System.gc()}), the highest sample less
 * the heap retained before the transaction. Run it with a heap large enough for the baseline:
 *
 * <pre>java -Xmx3g -cp benchmarks/target/benchmarks.jar io.tidemark.benchmarks.capture.LargeTransactionBenchmark [rows]</pre>
 *
 * Default 1,000,000 rows, written by one {@code INSERT ... SELECT} (about 30 s in all). The times it prints
 * include the sampler's full collections, which cost more the more the heap retains: they are not a measure of
 * delivery speed.
 */
public final class LargeTransactionBenchmark {

    private static final String APPLICATION = "tidemark-bench-large";

    private LargeTransactionBenchmark() {
    }

    public static void main(String[] args) throws Exception {
        long rows = args.length > 0 ? Long.parseLong(args[0]) : 1_000_000L;
        Instant started = Instant.now();
        try (BenchServer server = BenchServer.withWalLevel("logical")) {
            CaptureBench.execute(server.admin(), "CREATE TABLE public.lt_items (" + CaptureBench.COLUMNS + ")");
            Result held = run(server, "lt_held", rows, true);
            Result limited = run(server, "lt_limited", rows, false);
            System.out.printf(Locale.ROOT, "%nOne transaction of %,d inserted rows: %s, %s, max heap %d MB%n%n",
                    rows, server.describe(), started.truncatedTo(ChronoUnit.SECONDS),
                    Runtime.getRuntime().maxMemory() >> 20);
            System.out.println("| limits | delivered as | rows delivered | heap retained, peak |"
                    + " commit to delivered |");
            System.out.println("|---|---|---:|---:|---:|");
            held.print("above the transaction (held whole, the baseline)");
            limited.print("the defaults (200,000 changes, 128 MiB)");
        }
    }

    private record Result(String deliveredAs, long rows, long peakBytes, long millis) {
        void print(String limit) {
            System.out.printf(Locale.ROOT, "| %s | %s | %,d | %,d MB | %,.1f s |%n", limit, deliveredAs, rows,
                    peakBytes >> 20, millis / 1000.0);
        }
    }

    /** {@code holdWhole}: both limits above the transaction; otherwise the defaults. */
    private static Result run(BenchServer server, String slot, long rows, boolean holdWhole) throws Exception {
        CaptureBench.execute(server.admin(), "TRUNCATE public.lt_items");
        PostgresLogicalCapture capture = PostgresLogicalCapture.forTables("public.lt_items").slot(slot).build();
        capture.install(server.admin());
        AtomicLong delivered = new AtomicLong();
        AtomicLong exported = new AtomicLong();
        int[] reason = {0};
        UnaryOperator<PostgresLogicalProvider.Builder> limits = holdWhole
                ? b -> b.maxTransactionChanges(Integer.MAX_VALUE).maxTransactionBytes(Long.MAX_VALUE)
                : UnaryOperator.identity();
        try (AutoCloseable reader = LogicalReader.start(server, APPLICATION, capture, "Large-" + slot,
                "public.lt_items", (ChangeBatch batch) -> {
                    if (batch.syncType() == SyncType.FULL) {
                        exported.addAndGet(batch.changes().size());
                        reason[0] = batch.reasonCode();
                    }
                    delivered.addAndGet(batch.changes().size());
                }, limits)) {
            long before = retained();
            HeapSampler sampler = HeapSampler.start();
            long committed;
            try (Connection c = server.admin().getConnection();
                 PreparedStatement insert = c.prepareStatement("INSERT INTO public.lt_items "
                         + CaptureBench.GENERATED_ROWS)) {
                insert.setLong(1, 1);
                insert.setLong(2, rows);
                insert.executeUpdate();
                committed = System.nanoTime();
            }
            long deadline = committed + TimeUnit.MINUTES.toNanos(10);
            while (delivered.get() < rows) {
                if (System.nanoTime() > deadline) {
                    throw new IllegalStateException(delivered.get() + " of " + rows + " rows delivered in 10 min");
                }
                Thread.sleep(20);
            }
            long millis = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - committed);
            long peak = sampler.stop();
            String as = exported.get() > 0 ? "the table whole (Full, ReasonCode " + reason[0] + ")" : "changes";
            return new Result(as, delivered.get(), Math.max(0, peak - before), millis);
        } finally {
            capture.uninstall(server.admin());
        }
    }

    /** The heap in use after a full collection: what is retained. */
    private static long retained() {
        System.gc();
        Runtime r = Runtime.getRuntime();
        return r.totalMemory() - r.freeMemory();
    }

    /** Samples {@link #retained()} every 250 ms on a thread of its own and keeps the highest. */
    private static final class HeapSampler {
        private final Thread thread;
        private volatile boolean running = true;
        private long peak;

        private HeapSampler() {
            thread = new Thread(() -> {
                while (running) {
                    peak = Math.max(peak, retained());
                    try {
                        Thread.sleep(250);
                    } catch (InterruptedException e) {
                        return;
                    }
                }
            }, "heap-sampler");
            thread.setDaemon(true);
        }

        static HeapSampler start() {
            HeapSampler s = new HeapSampler();
            s.thread.start();
            return s;
        }

        long stop() throws InterruptedException {
            running = false;
            thread.interrupt();
            thread.join();
            return Math.max(peak, retained());
        }
    }
}
