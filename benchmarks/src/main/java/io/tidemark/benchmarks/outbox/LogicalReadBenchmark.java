package io.tidemark.benchmarks.outbox;

import com.fasterxml.jackson.core.JsonFactory;
import com.fasterxml.jackson.core.JsonParser;
import io.tidemark.benchmarks.ProcStat;
import io.tidemark.postgres.PostgresLogicalCapture;
import io.tidemark.postgres.PostgresLogicalProvider;
import io.tidemark.sync.JdbcWatermarkStore;
import io.tidemark.sync.TrackedObject;
import io.tidemark.sync.spi.CallContext;
import io.tidemark.sync.spi.ChangeRequest;
import io.tidemark.sync.spi.ResponsePayload;
import io.tidemark.testing.EmbeddedPostgresServer;
import io.tidemark.testing.TestDatabase;

import javax.sql.DataSource;
import java.io.IOException;
import java.lang.management.ManagementFactory;
import java.lang.management.ThreadMXBean;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.OptionalInt;

/**
 * Reading the changes: the log-based capture ({@link PostgresLogicalProvider}) against the reference change function
 * of docs/contract.md, on the same changes in the same run. The reference trigger and the publication sit on one
 * table, so every write lands in the reference outbox and in the WAL the provider decodes: the same changes (inserts,
 * updates, deletes in transactions of 100) as {@link ChangeFunctionBenchmark} writes.
 *
 * <p>Each round reads every change after the start: the reference in one call (it ignores maxRows), its answer read
 * whole on the client over a connection kept open; the provider through {@code ChangeProvider.invoke} as the engine
 * calls it, in one answer and in pages of 10,000 (what the engine asks when the object sets no maxRows) and 1,000,
 * each answer parsed whole and its changes counted. A read of the provider runs no SQL: its cost is the engine's CPU,
 * measured on the reading thread; the WAL sender's CPU to decode the changes, paid while they are written, is
 * reported beside it.
 *
 * <pre>java -Xmx2g -cp benchmarks/target/benchmarks.jar io.tidemark.benchmarks.outbox.LogicalReadBenchmark [changes] [runs]</pre>
 */
public final class LogicalReadBenchmark {

    private static final JsonFactory JSON = new JsonFactory();
    private static final ThreadMXBean THREADS = ManagementFactory.getThreadMXBean();
    private static final String SLOT = "tidemark_bench_read";

    private LogicalReadBenchmark() {
    }

    public static void main(String[] args) throws Exception {
        int changes = args.length > 0 ? Integer.parseInt(args[0]) : 200_000;
        int runs = args.length > 1 ? Integer.parseInt(args[1]) : 7;
        try (TestDatabase database = EmbeddedPostgresServer.shared().createDatabase()) {
            DataSource ds = database.dataSource();
            BenchDb.createItemsWithReference(ds);
            PostgresLogicalCapture capture = PostgresLogicalCapture.forTables("public.items").slot(SLOT).build();
            capture.install(ds);
            try (PostgresLogicalProvider provider = PostgresLogicalProvider.builder(capture)
                    .connect(database.jdbcUrl(), "postgres", null)
                    // Nothing is ever stored: the seed's hold keeps every change in the provider for every round.
                    .watermarks(JdbcWatermarkStore.create(ds))
                    .maxBufferedChanges(Math.max(1_000, changes * 2))
                    .build()) {
                // Requests are made here, not by an engine: the object's initial sync is never asked.
                run(ds, provider, capture.track("Items", "public.items"), changes, runs);
            } finally {
                capture.uninstall(ds);
            }
        }
    }

    private static void run(DataSource ds, PostgresLogicalProvider provider, TrackedObject items, int changes,
                            int runs) throws SQLException, IOException, InterruptedException {
        long from = read(provider, items, ChangeRequest.seed())[0];
        int walSender = walSenderPid(ds);
        long decodeCpu = ProcStat.cpuMillis(walSender);
        long writeStarted = System.nanoTime();
        ChangeFunctionBenchmark.write(ds, changes);
        long written = System.nanoTime() - writeStarted;
        long drained = awaitDecoded(provider, items, from, changes);
        decodeCpu = ProcStat.cpuMillis(walSender) - decodeCpu;
        long inReference = BenchDb.scalar(ds, "SELECT count(*) FROM public.items_outbox");
        if (inReference != changes) {
            throw new IllegalStateException("the reference outbox holds " + inReference + " changes, not " + changes);
        }
        BenchDb.execute(ds, "VACUUM ANALYZE public.items_outbox");
        System.out.printf(Locale.ROOT, "%,d changes written in %.1f s; the provider held every one %.0f ms after the"
                + " last commit; the WAL sender used %,d ms of CPU decoding them (%.1f µs a change)%n", changes,
                written / 1e9, drained / 1e6, decodeCpu, decodeCpu * 1000.0 / changes);

        List<Double> referenceRates = new ArrayList<>();
        List<Double> referenceCpu = new ArrayList<>();
        List<Double> wholeRates = new ArrayList<>();
        List<Double> wholeCpu = new ArrayList<>();
        List<Double> pagedRates = new ArrayList<>();
        List<Double> pagedCpu = new ArrayList<>();
        List<Double> smallRates = new ArrayList<>();
        long[] sizes = new long[2];
        try (ChangeFunctionBenchmark.PooledBackend reference = new ChangeFunctionBenchmark.PooledBackend(ds,
                "public.get_item_changes")) {
            for (int i = 0; i < runs + 2; i++) {
                long[] r = reference.call("{\"fromVersion\":0,\"mode\":\"sync\"}");
                long[] whole = readAll(provider, items, from, changes, changes);
                long[] paged = readAll(provider, items, from, 10_000, changes);
                long[] small = readAll(provider, items, from, 1_000, changes);
                sizes[0] = r[4];
                sizes[1] = whole[2];
                if (r[3] != changes) {
                    throw new IllegalStateException("the reference returned " + r[3] + " changes, not " + changes);
                }
                if (i >= 2) {
                    referenceRates.add(changes / (r[0] / 1e9));
                    referenceCpu.add((double) r[1]);
                    wholeRates.add(changes / (whole[0] / 1e9));
                    wholeCpu.add(whole[1] / 1e6);
                    pagedRates.add(changes / (paged[0] / 1e9));
                    pagedCpu.add(paged[1] / 1e6);
                    smallRates.add(changes / (small[0] / 1e9));
                }
            }
        }
        double ref = BenchDb.median(referenceRates);
        System.out.printf(Locale.ROOT, "%nReading %,d changes, median of %d runs after 2 warm-ups (reference %.1f MB of"
                + " JSON, the provider's answer %.1f MB), each answer parsed whole on the client:%n", changes, runs,
                sizes[0] / 1e6, sizes[1] / 1e6);
        System.out.printf(Locale.ROOT, "  reference function, one call  %,12.0f changes/s   database CPU %,6.0f ms"
                + "   runs %s%n", ref, BenchDb.median(referenceCpu), ChangeFunctionBenchmark.format(referenceRates));
        line("log-based, one answer        ", wholeRates, wholeCpu, ref);
        line("log-based, pages of 10,000   ", pagedRates, pagedCpu, ref);
        System.out.printf(Locale.ROOT, "  log-based, pages of 1,000     %,12.0f changes/s   %.2fx the reference   runs %s%n",
                BenchDb.median(smallRates), BenchDb.median(smallRates) / ref,
                ChangeFunctionBenchmark.format(smallRates));
        System.out.printf(Locale.ROOT, "  (the provider's reads run no SQL: the CPU given is the reading thread's, in"
                + " the engine's JVM)%n");
    }

    private static void line(String label, List<Double> rates, List<Double> cpu, double reference) {
        System.out.printf(Locale.ROOT, "  %s %,12.0f changes/s   engine CPU   %,6.0f ms   %.2fx the reference   runs %s%n",
                label, BenchDb.median(rates), BenchDb.median(cpu), BenchDb.median(rates) / reference,
                ChangeFunctionBenchmark.format(rates));
    }

    /** Nanoseconds from the call until the provider answers every change written. */
    private static long awaitDecoded(PostgresLogicalProvider provider, TrackedObject items, long from, int changes)
            throws IOException, InterruptedException {
        long started = System.nanoTime();
        long deadline = started + 300_000_000_000L;
        while (true) {
            long seen = readAll(provider, items, from, changes, -1)[3];
            if (seen == changes) {
                return System.nanoTime() - started;
            }
            if (seen > changes || System.nanoTime() > deadline) {
                throw new IllegalStateException("the provider holds " + seen + " changes, expected " + changes);
            }
            Thread.sleep(50);
        }
    }

    /**
     * {nanoseconds, thread CPU nanoseconds, bytes of the largest answer, changes} of reading from {@code from} on in
     * pages of {@code maxRows}, each page's version fed into the next request, as the engine does.
     *
     * @param expected the changes the read must see, or -1 to accept any number
     */
    private static long[] readAll(PostgresLogicalProvider provider, TrackedObject items, long from, int maxRows,
                                  int expected) throws IOException {
        long started = System.nanoTime();
        long cpu = THREADS.getCurrentThreadCpuTime();
        long seen = 0;
        long largest = 0;
        long version = from;
        while (true) {
            long[] page = read(provider, items, ChangeRequest.sync(version, OptionalInt.of(maxRows)));
            if (page[1] == 0) {
                break;
            }
            seen += page[1];
            largest = Math.max(largest, page[2]);
            version = page[0];
        }
        long nanos = System.nanoTime() - started;
        long cpuNanos = THREADS.getCurrentThreadCpuTime() - cpu;
        if (expected >= 0 && seen != expected) {
            throw new IllegalStateException("a read in pages of " + maxRows + " saw " + seen + " changes, not "
                    + expected);
        }
        return new long[] {nanos, cpuNanos, largest, seen};
    }

    /** {version, changes, bytes} of one answer of the provider, parsed whole. */
    private static long[] read(PostgresLogicalProvider provider, TrackedObject items, ChangeRequest request)
            throws IOException {
        try (ResponsePayload answer = provider.invoke(items, request, CallContext.none());
             JsonParser parser = answer.openParser(JSON)) {
            long[] versionAndCount = ChangeFunctionBenchmark.versionAndCount(parser);
            return new long[] {versionAndCount[0], versionAndCount[1], answer.size()};
        }
    }

    private static int walSenderPid(DataSource ds) throws SQLException {
        try (Connection c = ds.getConnection();
             PreparedStatement s = c.prepareStatement(
                     "SELECT active_pid FROM pg_catalog.pg_replication_slots WHERE slot_name = ?")) {
            s.setString(1, SLOT);
            try (ResultSet rs = s.executeQuery()) {
                if (!rs.next() || rs.getObject(1) == null) {
                    throw new IllegalStateException("slot " + SLOT + " has no WAL sender: the provider is not streaming");
                }
                return rs.getInt(1);
            }
        }
    }
}
