package io.tidemark.benchmarks.pipeline;

import io.tidemark.postgres.PostgresProvider;
import io.tidemark.sync.ChangeBatch;
import io.tidemark.sync.InMemoryWatermarkStore;
import io.tidemark.sync.ObjectReport;
import io.tidemark.sync.Outcome;
import io.tidemark.sync.SyncEngine;
import io.tidemark.sync.TrackedObject;
import io.tidemark.sync.spi.WatermarkStore;
import io.tidemark.testing.EmbeddedPostgresServer;
import io.tidemark.testing.TestDatabase;

import javax.sql.DataSource;
import java.lang.management.ManagementFactory;
import java.lang.management.MemoryPoolMXBean;
import java.lang.management.MemoryType;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Locale;
import java.util.OptionalLong;
import java.util.concurrent.atomic.AtomicLong;

/**
 * The pipeline benchmark of the foundation issue. Three measurements, each started on its own JVM so that its
 * heap limit applies to it alone (see benchmarks/README.md for the commands):
 *
 * <ul>
 *   <li>{@code throughput}: N changes read by (a) a raw JDBC call of the change function that reads the result
 *       and discards it, and (b) the engine end to end into a destination that only counts; alternating runs,
 *       median changes/s of each and the ratio (b)/(a).</li>
 *   <li>{@code backlog}: a backlog of at least 1 GB of changes drained through the engine with maxRows paging;
 *       meant to run under -Xmx256m.</li>
 *   <li>{@code large}: one un-paged change set of about 200 MB; the driver's copy of it is the only large
 *       allocation, peak heap is reported against the payload size; meant to run under -Xmx400m (2x).</li>
 * </ul>
 */
public final class PipelineBenchmark {

    private PipelineBenchmark() {
    }

    public static void main(String[] args) throws Exception {
        String mode = args.length > 0 ? args[0] : "throughput";
        try (TestDatabase database = EmbeddedPostgresServer.shared().createDatabase()) {
            DataSource ds = database.dataSource();
            BenchOutbox outbox = BenchOutbox.create(ds);
            switch (mode) {
                case "throughput":
                    throughput(ds, outbox, args.length > 1 ? Integer.parseInt(args[1]) : 200_000,
                            args.length > 2 ? Integer.parseInt(args[2]) : 7);
                    break;
                case "backlog":
                    backlog(ds, outbox, args.length > 1 ? Long.parseLong(args[1]) : 1L << 30);
                    break;
                case "large":
                    large(ds, outbox, args.length > 1 ? Long.parseLong(args[1]) : 200L * 1024 * 1024);
                    break;
                default:
                    throw new IllegalArgumentException("mode must be throughput, backlog or large: " + mode);
            }
        }
    }

    // ---------------------------------------------------------------------------------------------------------
    private static void throughput(DataSource ds, BenchOutbox outbox, int changes, int runs) throws Exception {
        BenchOutbox.fill(ds, changes / 1000, 1000);
        System.out.printf(Locale.ROOT, "throughput: %,d changes in the outbox, %d measured runs of each (after 2 warm-up runs)%n",
                BenchOutbox.count(ds), runs);
        List<Double> raw = new ArrayList<>();
        List<Double> engine = new ArrayList<>();
        long bytes = 0;
        for (int i = 0; i < runs + 2; i++) {
            long[] rawResult = rawCall(ds, outbox);
            long rawNanos = rawResult[0];
            bytes = rawResult[1];
            long[] engineResult = engineCall(ds, outbox);
            if (engineResult[1] != changes) {
                throw new IllegalStateException("the engine delivered " + engineResult[1] + " changes, expected " + changes);
            }
            if (i >= 2) {
                raw.add(changes / (rawNanos / 1e9));
                engine.add(changes / (engineResult[0] / 1e9));
            }
        }
        double rawMedian = median(raw);
        double engineMedian = median(engine);
        System.out.printf(Locale.ROOT, "payload: %,d bytes (%.0f bytes per change)%n", bytes, (double) bytes / changes);
        System.out.printf(Locale.ROOT, "(a) raw JDBC call:   median %,.0f changes/s  (runs: %s)%n", rawMedian, format(raw));
        System.out.printf(Locale.ROOT, "(b) engine end to end: median %,.0f changes/s  (runs: %s)%n", engineMedian, format(engine));
        System.out.printf(Locale.ROOT, "ratio (b)/(a): %.3f%n", engineMedian / rawMedian);
    }

    /** Returns {elapsed nanos, payload bytes}. */
    private static long[] rawCall(DataSource ds, BenchOutbox outbox) throws Exception {
        long started = System.nanoTime();
        long length;
        try (Connection c = ds.getConnection();
             PreparedStatement ps = c.prepareStatement("SELECT " + outbox.function() + "(?::json)")) {
            ps.setString(1, outbox.requestAll());
            try (ResultSet rs = ps.executeQuery()) {
                rs.next();
                length = rs.getBytes(1).length;
            }
        }
        return new long[] {System.nanoTime() - started, length};
    }

    /** Returns {elapsed nanos, changes delivered}. */
    private static long[] engineCall(DataSource ds, BenchOutbox outbox) {
        AtomicLong counted = new AtomicLong();
        try (SyncEngine engine = SyncEngine.builder()
                .provider(PostgresProvider.create(ds))
                .watermarks(startingAt(ds, "Bench", outbox))
                .track(TrackedObject.of("Bench", outbox.function()))
                .destination("count", batch -> counted.addAndGet(batch.changes().size()))
                .build()) {
            long started = System.nanoTime();
            ObjectReport report = engine.runOnce("Bench");
            long elapsed = System.nanoTime() - started;
            if (report.outcome() != Outcome.DELIVERED) {
                throw new IllegalStateException("engine cycle did not deliver: " + report);
            }
            return new long[] {elapsed, counted.get()};
        }
    }

    // ---------------------------------------------------------------------------------------------------------
    /** A fresh store holding the version the outbox's changes start after, as an incremental seed leaves it. */
    private static WatermarkStore startingAt(DataSource ds, String object, BenchOutbox outbox) {
        WatermarkStore store = InMemoryWatermarkStore.create();
        String source = PostgresProvider.create(ds).sourceIdentity(TrackedObject.of(object, outbox.function()));
        store.advance(object, source, OptionalLong.empty(), outbox.seed(), Instant.now());
        return store;
    }

    private static void backlog(DataSource ds, BenchOutbox outbox, long targetBytes) throws Exception {
        int perTransaction = 1000;
        int transactions = (int) (targetBytes / 115 / perTransaction) + 1;
        long fillStarted = System.nanoTime();
        BenchOutbox.fill(ds, transactions, perTransaction);
        long rows = BenchOutbox.count(ds);
        System.out.printf(Locale.ROOT, "backlog: %,d changes in %,d transactions written in %.1f s; max heap %,d MB%n",
                rows, transactions, (System.nanoTime() - fillStarted) / 1e9, Runtime.getRuntime().maxMemory() >> 20);
        resetPeaks();
        AtomicLong changes = new AtomicLong();
        AtomicLong bytes = new AtomicLong();
        int maxRows = 10_000;
        long started = System.nanoTime();
        int cycles = 0;
        try (SyncEngine engine = SyncEngine.builder()
                .provider(PostgresProvider.create(ds))
                .watermarks(startingAt(ds, "Backlog", outbox))
                .track(TrackedObject.of("Backlog", outbox.function()).maxRows(maxRows))
                .destination("count", batch -> count(batch, changes, bytes))
                .build()) {
            ObjectReport report;
            do {
                report = engine.runOnce("Backlog");
                cycles++;
                if (!report.isSuccess()) {
                    throw new IllegalStateException("cycle failed: " + report);
                }
            } while (report.outcome() == Outcome.DELIVERED);
        }
        double seconds = (System.nanoTime() - started) / 1e9;
        System.out.printf(Locale.ROOT, "drained %,d changes, %,.1f MB of change JSON, in %d calls of maxRows %,d, %.1f s (%,.0f changes/s)%n",
                changes.get(), bytes.get() / 1048576.0, cycles, maxRows, seconds, changes.get() / seconds);
        System.out.printf(Locale.ROOT, "peak heap used (sum of per-pool peaks, an upper bound): %,d MB under -Xmx%dm%n",
                peakHeapBytes() >> 20, Runtime.getRuntime().maxMemory() >> 20);
        if (changes.get() != rows) {
            throw new IllegalStateException("delivered " + changes.get() + " of " + rows + " changes");
        }
    }

    // ---------------------------------------------------------------------------------------------------------
    private static void large(DataSource ds, BenchOutbox outbox, long targetBytes) throws Exception {
        int rows = (int) (targetBytes / 120);
        BenchOutbox.fill(ds, 1, rows);
        System.gc();
        long before = usedHeap();
        System.out.printf(Locale.ROOT, "large: %,d changes in one transaction; heap used before %,d MB; max heap %,d MB%n",
                rows, before >> 20, Runtime.getRuntime().maxMemory() >> 20);

        resetPeaks();
        long[] raw = rawCall(ds, outbox);
        long rawPeak = peakHeapBytes();
        System.out.printf(Locale.ROOT, "(baseline) raw JDBC call: payload %,d bytes (%.1f MB) read in %.1f s; peak heap %,d MB%n",
                raw[1], raw[1] / 1048576.0, raw[0] / 1e9, rawPeak >> 20);
        System.gc();

        resetPeaks();
        AtomicLong changes = new AtomicLong();
        AtomicLong bytes = new AtomicLong();
        long started = System.nanoTime();
        try (SyncEngine engine = SyncEngine.builder()
                .provider(PostgresProvider.create(ds))
                .watermarks(startingAt(ds, "Large", outbox))
                .track(TrackedObject.of("Large", outbox.function()))
                .destination("count", batch -> count(batch, changes, bytes))
                .build()) {
            ObjectReport report = engine.runOnce("Large");
            if (report.outcome() != Outcome.DELIVERED) {
                throw new IllegalStateException("cycle did not deliver: " + report);
            }
        }
        long enginePeak = peakHeapBytes();
        System.out.printf(Locale.ROOT, "engine: %,d changes (%.1f MB of change JSON) in %.1f s; peak heap %,d MB = %.2fx the payload%n",
                changes.get(), bytes.get() / 1048576.0, (System.nanoTime() - started) / 1e9, enginePeak >> 20,
                (double) enginePeak / raw[1]);
    }

    private static void count(ChangeBatch batch, AtomicLong changes, AtomicLong bytes) {
        changes.addAndGet(batch.changes().size());
        batch.changes().forEach(c -> bytes.addAndGet(c.rawUtf8().length));
    }

    // ---------------------------------------------------------------------------------------------------------
    private static void resetPeaks() {
        for (MemoryPoolMXBean pool : ManagementFactory.getMemoryPoolMXBeans()) {
            if (pool.getType() == MemoryType.HEAP) {
                pool.resetPeakUsage();
            }
        }
    }

    private static long peakHeapBytes() {
        long sum = 0;
        for (MemoryPoolMXBean pool : ManagementFactory.getMemoryPoolMXBeans()) {
            if (pool.getType() == MemoryType.HEAP) {
                sum += pool.getPeakUsage().getUsed();
            }
        }
        return sum;
    }

    private static long usedHeap() {
        return ManagementFactory.getMemoryMXBean().getHeapMemoryUsage().getUsed();
    }

    private static double median(List<Double> values) {
        List<Double> sorted = new ArrayList<>(values);
        Collections.sort(sorted);
        int n = sorted.size();
        return n % 2 == 1 ? sorted.get(n / 2) : (sorted.get(n / 2 - 1) + sorted.get(n / 2)) / 2;
    }

    private static String format(List<Double> values) {
        StringBuilder sb = new StringBuilder();
        for (double v : values) {
            sb.append(sb.length() == 0 ? "" : ", ").append(String.format(Locale.ROOT, "%,.0f", v));
        }
        return sb.toString();
    }
}
