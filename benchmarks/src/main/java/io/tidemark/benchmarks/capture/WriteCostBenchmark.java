package io.tidemark.benchmarks.capture;

import io.tidemark.postgres.CaptureShape;
import io.tidemark.postgres.PostgresLogicalCapture;
import io.tidemark.postgres.PostgresOutbox;
import io.tidemark.postgres.PostgresProvider;
import io.tidemark.sync.ChangeBatch;
import io.tidemark.sync.InitialSync;
import io.tidemark.sync.JdbcWatermarkStore;
import io.tidemark.sync.SyncEngine;
import io.tidemark.testing.PooledDataSource;

import javax.sql.DataSource;
import java.time.Duration;
import java.time.Instant;
import java.time.temporal.ChronoUnit;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.concurrent.atomic.AtomicLong;

/**
 * What capture costs the application's writes (issue 16): the same statements on three identical tables of one
 * embedded PostgreSQL 18, in the same run:
 * <ul>
 *   <li>{@code plain}: no trigger, the baseline;</li>
 *   <li>{@code capture}: {@link PostgresOutbox} with its defaults (wake-ups on);</li>
 *   <li>{@code capture, no wake-ups}: {@link PostgresOutbox} with {@code notifications(false)};</li>
 *   <li>{@code keys} and {@code keys, no wake-ups}: the same two with {@code capture(CaptureShape.KEYS)}.</li>
 * </ul>
 * Throughput, pgbench style ({@link ClientCell}): single-row INSERT, UPDATE by key and DELETE by key at 1 and 8
 * clients, and a 1,000-row INSERT and UPDATE statement at 1 client, every statement its own auto-committed
 * transaction. Each round resets the tables to the same seeded state, measures WAL per changed row
 * ({@link WalMeter}), then runs every cell on the three tables in turn, the table that goes first rotating. The
 * report gives median throughputs, the median of the per-round fractions of plain, and the targets beside
 * them. The outboxes are emptied before every cell, so each starts from the same outbox.
 *
 * <p>Reader {@code none} (the default) measures the writes alone, as pgbench does. Reader {@code engine} runs a
 * {@link SyncEngine} for the whole run, LISTENing with {@link PostgresProvider}'s defaults and tracking both captured
 * tables: a wake-up scheme that depends on what the poller has read is only measured fairly with a poller reading.
 * The engine's queries then compete with the writers for the same cores, as they would in production.
 *
 * <p>Durability {@code fast} (the default) runs on the test fixtures' server, {@code fsync} and
 * {@code full_page_writes} off: a commit costs no disk flush, so the figures show the CPU the capture adds, the
 * strictest comparison. {@code durable} starts a server of its own with both on ({@link BenchServer}), as on a
 * production server: a single-row transaction then also waits for its WAL flush on this machine's disk, which
 * dilutes the capture's share, and the WAL figures include full-page images after each checkpoint.
 *
 * <p>Server {@code logical} measures the log-based capture instead ({@link PostgresLogicalCapture}): on a server of
 * its own with {@code wal_level = logical}, a plain table, a table captured from the WAL (its reader, a
 * {@link SyncEngine} with {@code PostgresLogicalProvider}, streams for the whole run, as it would in production: the
 * server decodes every table's WAL as it is written) and the two outboxes of keys; and, on a second server at the
 * default {@code wal_level = replica}, a plain table, for what the WAL level alone costs. Server {@code logical-old-rows}
 * is the same with the capture's {@code oldRows(true)} ({@code REPLICA IDENTITY FULL}: the old row in the WAL of every
 * update and delete, which {@code $changed} needs).
 *
 * <pre>java -cp benchmarks/target/benchmarks.jar io.tidemark.benchmarks.capture.WriteCostBenchmark [secondsPerCell] [rounds] [walStatements] [none|engine] [fast|durable|logical|logical-old-rows]</pre>
 *
 * Defaults {@code 2 3 50 none fast} take about eight minutes (five tables); {@code 1 1 5} is a quick check that everything runs.
 */
public final class WriteCostBenchmark {

    private static final int MANY_CLIENTS = 8;
    private static final double WAL_TARGET = 1.8;
    private static final double WAKE_UP_TARGET = 0.95;

    /** A workload at a number of clients: one row of the report. */
    record Cell(Workload workload, int clients) {
        String label() {
            return workload.label() + " | " + clients;
        }
    }

    static final List<Cell> CELLS = List.of(
            new Cell(Workload.INSERT_ONE, 1), new Cell(Workload.INSERT_ONE, MANY_CLIENTS),
            new Cell(Workload.UPDATE_ONE, 1), new Cell(Workload.UPDATE_ONE, MANY_CLIENTS),
            new Cell(Workload.DELETE_ONE, 1), new Cell(Workload.DELETE_ONE, MANY_CLIENTS),
            new Cell(Workload.INSERT_THOUSAND, 1), new Cell(Workload.UPDATE_THOUSAND, 1));

    private final List<BenchTable> tables;
    private final long deleteRows;
    /** throughput.get(cell).get(table label): statements per second, one per measured round. */
    private final Map<Cell, Map<String, List<Double>>> throughput = new LinkedHashMap<>();
    /** wal.get(workload).get(table label): WAL bytes per changed row, one per measured round. */
    private final Map<String, Map<String, List<Double>>> wal = new LinkedHashMap<>();
    private final List<String> notes = new ArrayList<>();

    private WriteCostBenchmark(List<BenchTable> tables, long deleteRows) {
        this.tables = tables;
        this.deleteRows = deleteRows;
    }

    public static void main(String[] args) throws Exception {
        int seconds = args.length > 0 ? Integer.parseInt(args[0]) : 2;
        int rounds = args.length > 1 ? Integer.parseInt(args[1]) : 3;
        int walStatements = args.length > 2 ? Integer.parseInt(args[2]) : 50;
        String reader = args.length > 3 ? args[3] : "none";
        if (!reader.equals("none") && !reader.equals("engine")) {
            throw new IllegalArgumentException("reader must be none or engine, not " + reader);
        }
        String server = args.length > 4 ? args[4] : "fast";
        if (!List.of("fast", "durable", "logical", "logical-old-rows").contains(server)) {
            throw new IllegalArgumentException("the server must be fast, durable, logical or logical-old-rows, not "
                    + server);
        }
        boolean logical = server.startsWith("logical");
        PostgresLogicalCapture capture = PostgresLogicalCapture.forTables("public.wc_published").slot("wc_logical")
                .oldRows(server.equals("logical-old-rows")).build();
        String loadBefore = CaptureBench.loadAverage();
        Instant started = Instant.now();
        try (BenchServer main = switch (server) {
                case "durable" -> BenchServer.durable();
                case "logical", "logical-old-rows" -> BenchServer.withWalLevel("logical");
                default -> BenchServer.fast();
            };
             BenchServer replica = logical ? BenchServer.withWalLevel("replica") : null) {
            List<BenchTable> tables = logical ? logicalTables(main, replica, capture) : List.of(
                    table(main, "plain", "public.wc_plain", null),
                    table(main, "capture", "public.wc_capture", PostgresOutbox.forTable("public.wc_capture").build()),
                    table(main, "capture, no wake-ups", "public.wc_quiet",
                            PostgresOutbox.forTable("public.wc_quiet").notifications(false).build()),
                    keys(main), keysQuiet(main));
            // Enough seeded rows that the single-row DELETE cells rarely run out (a cell that does is noted).
            long deleteRows = 20_000 + 100_000L * seconds;
            WriteCostBenchmark bench = new WriteCostBenchmark(tables, deleteRows);

            AtomicLong delivered = new AtomicLong();
            AutoCloseable none = () -> { };
            AtomicLong logicalDelivered = new AtomicLong();
            try (AutoCloseable engine = reader.equals("engine") ? startReader(main, tables, delivered) : none;
                 // The log-based capture's reader, for the whole run: the server decodes the WAL as it is written.
                 AutoCloseable logicalReader = logical ? LogicalReader.start(main,
                         PollerCostBenchmark.ENGINE_APPLICATION, capture, "published", "public.wc_published",
                         (ChangeBatch batch) -> logicalDelivered.addAndGet(batch.changes().size())) : none) {
                bench.round(0, Duration.ofSeconds(1), Math.max(1, walStatements / 10), false);
                System.out.printf(Locale.ROOT, "warm-up done%n");
                for (int round = 1; round <= rounds; round++) {
                    bench.round(round, Duration.ofSeconds(seconds), walStatements, true);
                    System.out.printf(Locale.ROOT, "round %d of %d done%n", round, rounds);
                }
                if (logical) {
                    bench.notes.add(String.format(Locale.ROOT, "the logical capture's engine delivered %,d changes"
                            + " of the published table during the run", logicalDelivered.get()));
                }
            }
            System.out.println();
            System.out.printf(Locale.ROOT, "Write cost of capture: %s, %s, %d s per cell, %d rounds, %d x 1,000-row"
                            + " statements per WAL workload; reader: %s; load average %s before, %s after;"
                            + " %d s in all%n",
                    main.describe(), started.truncatedTo(ChronoUnit.SECONDS), seconds, rounds,
                    walStatements,
                    reader.equals("engine") ? "a LISTENing engine (" + delivered.get() + " changes delivered)"
                            : "none", loadBefore, CaptureBench.loadAverage(),
                    Duration.between(started, Instant.now()).toSeconds());
            if (logical) {
                System.out.printf(Locale.ROOT, "\"plain, wal_level replica\" on a second server: %s%n",
                        replica.describe());
                bench.report("PostgresLogicalCapture" + (capture.oldRows() ? " with oldRows(true)" : "")
                        + ": the table in a publication, its slot streamed by PostgresLogicalProvider, no trigger",
                        "plain", "published", null);
                bench.report("What wal_level = logical costs a table nobody captures (the targets do not apply)",
                        "plain, wal_level replica", "plain", null);
                bench.report("CaptureShape.KEYS, on the same wal_level = logical server", "plain", "keys",
                        "keys, no wake-ups");
            } else {
                bench.report("CaptureShape.FULL_IMAGE (the default)", "plain", "capture", "capture, no wake-ups");
                bench.report("CaptureShape.KEYS", "plain", "keys", "keys, no wake-ups");
            }
            bench.notes.forEach(n -> System.out.println("note: " + n));
        }
    }

    private static BenchTable keys(BenchServer server) throws Exception {
        return table(server, "keys", "public.wc_keys",
                PostgresOutbox.forTable("public.wc_keys").capture(CaptureShape.KEYS).build());
    }

    private static BenchTable keysQuiet(BenchServer server) throws Exception {
        return table(server, "keys, no wake-ups", "public.wc_keys_quiet",
                PostgresOutbox.forTable("public.wc_keys_quiet").capture(CaptureShape.KEYS).notifications(false)
                        .build());
    }

    /**
     * The tables of the logical run: on the {@code wal_level = logical} server a plain table, a table captured by
     * {@link PostgresLogicalCapture} (no trigger: its changes are read from the WAL) and the two outboxes of keys; on a second server at the default {@code wal_level = replica}, a plain table, for what the WAL level
     * alone costs.
     */
    private static List<BenchTable> logicalTables(BenchServer logical, BenchServer replica,
                                                  PostgresLogicalCapture capture) throws Exception {
        List<BenchTable> tables = List.of(
                table(logical, "plain", "public.wc_plain", null),
                table(replica, "plain, wal_level replica", "public.wc_plain_replica", null),
                table(logical, "published", "public.wc_published", null),
                keys(logical), keysQuiet(logical));
        capture.install(logical.admin());
        return tables;
    }

    /**
     * A running engine reading both captured tables with the defaults (LISTEN, the default poll interval), its
     * connections in a pool of their own; closing it stops the engine, then the pool.
     */
    private static AutoCloseable startReader(BenchServer server, List<BenchTable> tables, AtomicLong delivered) {
        PooledDataSource pool = PooledDataSource.of(server.dataSource(PollerCostBenchmark.ENGINE_APPLICATION), 4);
        SyncEngine.Builder builder = SyncEngine.builder().name("write-cost-reader")
                .provider(PostgresProvider.create(pool))
                .watermarks(JdbcWatermarkStore.create(pool))
                .destination("counter", (ChangeBatch batch) -> delivered.addAndGet(batch.changes().size()));
        for (BenchTable t : tables) {
            if (t.captured()) {
                String objectName = t.name().substring(t.name().indexOf('.') + 1);
                builder.track(t.outbox().track(objectName).initialSync(InitialSync.INCREMENTAL));
            }
        }
        SyncEngine engine = builder.build();
        engine.runOnce(); // the seeds: from here on, only changes
        engine.start();
        return () -> {
            try {
                engine.close();
            } finally {
                pool.close();
            }
        };
    }

    private static BenchTable table(BenchServer server, String label, String name, PostgresOutbox outbox)
            throws Exception {
        DataSource admin = server.admin();
        CaptureBench.execute(admin, "CREATE TABLE " + name + " (" + CaptureBench.COLUMNS + ")");
        if (outbox != null) {
            outbox.install(admin);
        }
        BenchTable table = new BenchTable(label, name, outbox, admin, server.dataSource("tidemark-bench-writer"));
        table.disableAutovacuum();
        return table;
    }

    private void round(int round, Duration perCell, int walStatements, boolean record) throws Exception {
        for (BenchTable t : tables) {
            t.reset(deleteRows);
        }
        // WAL first, right after the reset and VACUUM, when nothing else has work to write.
        for (BenchTable t : rotated(round)) {
            t.emptyOutbox();
            Map<String, Double> perRow = WalMeter.measure(t.writers(), t, walStatements);
            if (record) {
                perRow.forEach((workload, bytes) -> wal.computeIfAbsent(workload, k -> new LinkedHashMap<>())
                        .computeIfAbsent(t.label(), k -> new ArrayList<>()).add(bytes));
            }
        }
        for (int i = 0; i < CELLS.size(); i++) {
            Cell cell = CELLS.get(i);
            for (BenchTable t : rotated(round + i)) {
                t.emptyOutbox();
                ClientCell.Result result = ClientCell.run(t.writers(), t, cell.workload(), cell.clients(), perCell);
                if (result.exhausted()) {
                    notes.add(String.format(Locale.ROOT, "round %d: %s on %s ran out of seeded rows before the"
                            + " time was up (its rate is over the time it ran)", round, cell.label(), t.label()));
                }
                if (record) {
                    throughput.computeIfAbsent(cell, k -> new LinkedHashMap<>())
                            .computeIfAbsent(t.label(), k -> new ArrayList<>()).add(result.perSecond());
                }
            }
        }
    }

    /** The tables, the one going first moving on by one each time. */
    private List<BenchTable> rotated(int by) {
        List<BenchTable> order = new ArrayList<>();
        for (int k = 0; k < tables.size(); k++) {
            order.add(tables.get((by + k) % tables.size()));
        }
        return order;
    }

    /**
     * One section of the report: {@code capture} against {@code plain}, and where {@code quiet} is given (the same
     * capture without wake-ups) that table too, with what the wake-ups cost.
     */
    private void report(String title, String plain, String capture, String quiet) {
        int met = 0;
        int checked = 0;
        boolean pair = quiet != null;

        System.out.printf(Locale.ROOT, "%n## %s: \"%s\"%s against \"%s\"%n", title, capture,
                pair ? " and \"" + quiet + "\"" : "", plain);
        System.out.printf(Locale.ROOT, "%nThroughput, statements per second (median over the rounds). A fraction is the"
                + " median of the per-round ratios, [lowest, highest] beside it.%n%n");
        System.out.println("| statement | clients | " + plain + " /s | " + capture + " /s | " + capture + " ÷ "
                + plain + " | target | |" + (pair ? " " + quiet + " /s | " + quiet + " ÷ " + plain
                + " | | wake-ups on ÷ off | target | |" : ""));
        System.out.println("|---|---:|---:|---:|---:|---:|---|" + (pair ? "---:|---:|---|---:|---:|---|" : ""));
        for (Map.Entry<Cell, Map<String, List<Double>>> e : throughput.entrySet()) {
            Cell cell = e.getKey();
            Map<String, List<Double>> by = e.getValue();
            double target = cell.workload().target();
            List<Double> captureRatio = ratios(by.get(capture), by.get(plain));
            boolean captureMet = CaptureBench.median(captureRatio) >= target;
            checked++;
            met += captureMet ? 1 : 0;
            System.out.printf(Locale.ROOT, "| %s | %,.0f | %,.0f | %s | ≥ %.1f | %s |", cell.label(),
                    CaptureBench.median(by.get(plain)), CaptureBench.median(by.get(capture)), fraction(captureRatio),
                    target, CaptureBench.verdict(captureMet));
            if (pair) {
                List<Double> quietRatio = ratios(by.get(quiet), by.get(plain));
                List<Double> wakeRatio = ratios(by.get(capture), by.get(quiet));
                String wakeTarget = "—";
                String wakeVerdict = "";
                if (cell.clients() == MANY_CLIENTS) {
                    boolean wakeMet = CaptureBench.median(wakeRatio) >= WAKE_UP_TARGET;
                    wakeTarget = String.format(Locale.ROOT, "≥ %.2f", WAKE_UP_TARGET);
                    wakeVerdict = CaptureBench.verdict(wakeMet);
                    checked++;
                    met += wakeMet ? 1 : 0;
                }
                System.out.printf(Locale.ROOT, " %,.0f | %s | %s | %s | %s | %s |", CaptureBench.median(by.get(quiet)),
                        fraction(quietRatio), CaptureBench.verdict(CaptureBench.median(quietRatio) >= target),
                        fraction(wakeRatio), wakeTarget, wakeVerdict);
            }
            System.out.println();
        }

        System.out.printf(Locale.ROOT, "%nWAL per changed row, bytes (median over the rounds; ratio: median of the"
                + " per-round ratios). Target: at most %.1fx the plain table's.%n%n", WAL_TARGET);
        System.out.println("| workload | " + plain + " B/row | " + capture + " B/row | " + capture + " ÷ " + plain
                + " | |" + (pair ? " " + quiet + " B/row | " + quiet + " ÷ " + plain + " | |" : ""));
        System.out.println("|---|---:|---:|---:|---|" + (pair ? "---:|---:|---|" : ""));
        for (Map.Entry<String, Map<String, List<Double>>> e : wal.entrySet()) {
            Map<String, List<Double>> by = e.getValue();
            List<Double> captureRatio = ratios(by.get(capture), by.get(plain));
            boolean captureMet = CaptureBench.median(captureRatio) <= WAL_TARGET;
            checked++;
            met += captureMet ? 1 : 0;
            System.out.printf(Locale.ROOT, "| %s | %,.0f | %,.0f | %s | %s |", e.getKey(),
                    CaptureBench.median(by.get(plain)), CaptureBench.median(by.get(capture)), fraction(captureRatio),
                    CaptureBench.verdict(captureMet));
            if (pair) {
                List<Double> quietRatio = ratios(by.get(quiet), by.get(plain));
                System.out.printf(Locale.ROOT, " %,.0f | %s | %s |", CaptureBench.median(by.get(quiet)),
                        fraction(quietRatio), CaptureBench.verdict(CaptureBench.median(quietRatio) <= WAL_TARGET));
            }
            System.out.println();
        }
        System.out.printf(Locale.ROOT, "%nTargets met by \"%s\": %d of %d%n", capture, met, checked);
    }

    /** Per-round ratios of two figures measured in the same rounds. */
    private static List<Double> ratios(List<Double> of, List<Double> to) {
        List<Double> ratios = new ArrayList<>();
        for (int i = 0; i < of.size(); i++) {
            ratios.add(of.get(i) / to.get(i));
        }
        return ratios;
    }

    private static String fraction(List<Double> ratios) {
        if (ratios.size() == 1) {
            return String.format(Locale.ROOT, "%.2f", ratios.get(0));
        }
        return String.format(Locale.ROOT, "%.2f [%.2f, %.2f]", CaptureBench.median(ratios),
                CaptureBench.quantile(ratios, 0), CaptureBench.quantile(ratios, 1));
    }
}
