package io.tidemark.benchmarks.coordination;

import io.tidemark.postgres.PostgresProvider;
import io.tidemark.sync.Coordination;
import io.tidemark.sync.JdbcWatermarkStore;
import io.tidemark.sync.ObjectReport;
import io.tidemark.sync.Outcome;
import io.tidemark.sync.SyncEngine;
import io.tidemark.sync.TrackedObject;
import io.tidemark.testing.EmbeddedPostgresServer;
import io.tidemark.testing.TestDatabase;
import org.postgresql.ds.PGSimpleDataSource;

import javax.sql.DataSource;
import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.HashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;

/**
 * The cost of coordination (issue 12), measured against its baseline in the same run:
 * <ul>
 *   <li>{@code cycles [rounds] [cyclesPerRound]}: cycles per second of one object that delivers one change per
 *       cycle (so every cycle writes its position), run by {@code runOnce} on an engine without coordination and
 *       on one with it (holding the object's lease: each write fenced), in interleaved rounds whose order
 *       alternates; medians of the rounds and of the per-round ratios;</li>
 *   <li>{@code takeover [kills] [leaseMillis]}: a survivor engine in this JVM and a second instance in a child JVM
 *       share four objects; the child is killed with SIGKILL once it holds its two, and the time until the survivor
 *       holds all four is measured; median and worst of the kills.</li>
 * </ul>
 * Run by hand (benchmarks/README-coordination.md), never by the test suite.
 */
public final class LeaseBenchmark {

    private static final int OBJECTS = 4;

    private LeaseBenchmark() {
    }

    public static void main(String[] args) throws Exception {
        if (args.length > 0 && args[0].equals("child")) {
            child(args);
            return;
        }
        String mode = args.length > 0 ? args[0] : "cycles";
        try (TestDatabase database = EmbeddedPostgresServer.shared().createDatabase()) {
            DataSource ds = database.dataSource();
            install(ds);
            if (mode.equals("cycles")) {
                cycles(ds, args.length > 1 ? Integer.parseInt(args[1]) : 9,
                        args.length > 2 ? Integer.parseInt(args[2]) : 200);
            } else if (mode.equals("takeover")) {
                takeover(database, args.length > 1 ? Integer.parseInt(args[1]) : 20,
                        Duration.ofMillis(args.length > 2 ? Long.parseLong(args[2]) : 3000));
            } else {
                throw new IllegalArgumentException("mode must be cycles or takeover: " + mode);
            }
        }
    }

    /** A rows table and one change function per object ({@code bench_0} .. {@code bench_4}). */
    private static void install(DataSource ds) throws SQLException {
        try (Connection c = ds.getConnection(); Statement s = c.createStatement()) {
            s.execute("CREATE TABLE bench_rows (object text NOT NULL, v bigint NOT NULL, PRIMARY KEY (object, v))");
            for (int i = 0; i <= OBJECTS; i++) {
                s.execute("CREATE FUNCTION public.bench_" + i + "(payload json) RETURNS json LANGUAGE plpgsql AS $fn$\n"
                        + "DECLARE from_version bigint := COALESCE((payload ->> 'fromVersion')::bigint, 0);\n"
                        + "  rows_json json; top bigint;\n"
                        + "BEGIN\n"
                        + "  SELECT json_agg(json_build_object('$operation', 'I', '$version', r.v, 'Id', r.v)"
                        + " ORDER BY r.v), max(r.v) INTO rows_json, top\n"
                        + "    FROM (SELECT v FROM bench_rows WHERE object = 'bench_" + i + "' AND v > from_version"
                        + " ORDER BY v) r;\n"
                        + "  RETURN json_build_object('Metadata', json_build_object('Sync', json_build_object("
                        + "'Version', COALESCE(top, from_version), 'Type', 'Diff', 'ReasonCode', 0)),"
                        + " 'Data', COALESCE(rows_json, '[]'::json));\n"
                        + "END $fn$");
            }
        }
    }

    private static SyncEngine.Builder engine(DataSource ds, String name, Coordination coordination,
                                             List<String> objects) {
        SyncEngine.Builder builder = SyncEngine.builder()
                .name(name)
                .provider(PostgresProvider.builder(ds).listen(false).build())
                .watermarks(JdbcWatermarkStore.create(ds))
                .pollInterval(Duration.ofHours(1))
                .destination("sink", batch -> { })
                .coordination(coordination);
        objects.forEach(o -> builder.track(TrackedObject.of(o, "public." + o)));
        return builder;
    }

    // ---------------------------------------------------------------------------------------------------------
    private static void cycles(DataSource ds, int rounds, int perRound) throws Exception {
        // The plain engine runs bench_0; the coordinated one bench_1, whose lease it takes once started (its
        // poll interval is an hour, so the background poller stays out of the measured cycles).
        try (SyncEngine plain = engine(ds, "plain", null, List.of("bench_0")).build();
             SyncEngine coordinated = engine(ds, "coordinated", Coordination.builder().instanceId("bench")
                     .leaseDuration(Duration.ofSeconds(15)).build(), List.of("bench_1")).build()) {
            coordinated.start();
            long deadline = System.nanoTime() + Duration.ofSeconds(30).toNanos();
            while (coordinated.runOnce("bench_1").outcome() == Outcome.LEASED_ELSEWHERE) {
                if (System.nanoTime() > deadline) {
                    throw new IllegalStateException("the coordinated engine did not take its lease");
                }
                Thread.sleep(50);
            }
            System.out.printf(Locale.ROOT, "cycles: %d measured rounds of %d cycles each (after 2 warm-up rounds),"
                    + " one change delivered per cycle%n", rounds, perRound);
            List<Double> plainRates = new ArrayList<>();
            List<Double> coordinatedRates = new ArrayList<>();
            List<Double> ratios = new ArrayList<>();
            long[] next = {1, 1};
            for (int round = 0; round < rounds + 2; round++) {
                double a;
                double b;
                if (round % 2 == 0) {
                    a = rate(ds, plain, "bench_0", perRound, next, 0);
                    b = rate(ds, coordinated, "bench_1", perRound, next, 1);
                } else {
                    b = rate(ds, coordinated, "bench_1", perRound, next, 1);
                    a = rate(ds, plain, "bench_0", perRound, next, 0);
                }
                if (round >= 2) {
                    plainRates.add(a);
                    coordinatedRates.add(b);
                    ratios.add(b / a);
                }
                System.out.printf(Locale.ROOT, "  round %d: without %.1f cycles/s, with %.1f cycles/s, ratio %.3f%s%n",
                        round + 1, a, b, b / a, round < 2 ? " (warm-up)" : "");
            }
            System.out.printf(Locale.ROOT, "median: without coordination %.1f cycles/s, with %.1f cycles/s,"
                            + " ratio (median of rounds) %.3f%n", median(plainRates), median(coordinatedRates),
                    median(ratios));
        }
    }

    /** Cycles per second of {@code perRound} cycles, each delivering one change inserted before it (not timed). */
    private static double rate(DataSource ds, SyncEngine engine, String object, int perRound, long[] next, int slot)
            throws SQLException {
        long nanos = 0;
        for (int i = 0; i < perRound; i++) {
            try (Connection c = ds.getConnection(); Statement s = c.createStatement()) {
                s.execute("INSERT INTO bench_rows VALUES ('" + object + "', " + next[slot]++ + ")");
            }
            long start = System.nanoTime();
            ObjectReport report = engine.runOnce(object);
            nanos += System.nanoTime() - start;
            if (report.outcome() != Outcome.DELIVERED && report.outcome() != Outcome.SEEDED) {
                throw new IllegalStateException(object + ": " + report);
            }
        }
        return perRound / (nanos / 1e9);
    }

    // ---------------------------------------------------------------------------------------------------------
    private static void takeover(TestDatabase database, int kills, Duration lease) throws Exception {
        DataSource ds = database.dataSource();
        List<String> objects = new ArrayList<>();
        for (int i = 1; i <= OBJECTS; i++) {
            objects.add("bench_" + i);
        }
        Duration bound = lease.plus(lease.dividedBy(3));
        System.out.printf(Locale.ROOT, "takeover: %d kills, lease %d ms (promised bound: lease + renewal interval"
                + " = %d ms)%n", kills, lease.toMillis(), bound.toMillis());
        List<Long> times = new ArrayList<>();
        try (SyncEngine survivor = engine(ds, "survivor", Coordination.builder().instanceId("survivor")
                .leaseDuration(lease).build(), objects).build()) {
            survivor.start();
            for (int kill = 1; kill <= kills; kill++) {
                String instance = "child-" + kill;
                Process child = new ProcessBuilder(Path.of(System.getProperty("java.home"), "bin", "java").toString(),
                        "-Xmx128m", "-cp", System.getProperty("java.class.path"), LeaseBenchmark.class.getName(),
                        "child", database.jdbcUrl(), instance, Long.toString(lease.toMillis()))
                        .redirectErrorStream(true).redirectOutput(ProcessBuilder.Redirect.DISCARD).start();
                try {
                    awaitCounts(ds, Map.of("survivor", 2, instance, 2), Duration.ofSeconds(120));
                    long killed = System.nanoTime();
                    child.destroyForcibly();
                    awaitCounts(ds, Map.of("survivor", OBJECTS), Duration.ofSeconds(120));
                    long ms = (System.nanoTime() - killed) / 1_000_000;
                    times.add(ms);
                    System.out.printf(Locale.ROOT, "  kill %d: taken over after %d ms%n", kill, ms);
                } finally {
                    child.destroyForcibly();
                    child.waitFor();
                }
            }
        }
        List<Long> sorted = new ArrayList<>(times);
        Collections.sort(sorted);
        System.out.printf(Locale.ROOT, "takeover after SIGKILL: median %d ms, worst %d ms, best %d ms (bound %d ms)%n",
                sorted.get(sorted.size() / 2), sorted.get(sorted.size() - 1), sorted.get(0), bound.toMillis());
    }

    private static void awaitCounts(DataSource ds, Map<String, Integer> wanted, Duration timeout) throws Exception {
        long deadline = System.nanoTime() + timeout.toNanos();
        while (!counts(ds).equals(wanted)) {
            if (System.nanoTime() > deadline) {
                throw new IllegalStateException("leases never reached " + wanted + "; now " + counts(ds));
            }
            Thread.sleep(20);
        }
    }

    private static Map<String, Integer> counts(DataSource ds) throws SQLException {
        Map<String, Integer> counts = new HashMap<>();
        try (Connection c = ds.getConnection(); Statement s = c.createStatement();
             ResultSet rs = s.executeQuery("SELECT holder, count(*) FROM tidemark.sync_state_leases"
                     + " WHERE expires_at > clock_timestamp() GROUP BY holder")) {
            while (rs.next()) {
                counts.put(rs.getString(1), rs.getInt(2));
            }
        }
        return counts;
    }

    /** The instance in the child JVM: {@code child <jdbcUrl> <instance> <leaseMillis>}; runs until killed. */
    private static void child(String[] args) throws Exception {
        PGSimpleDataSource ds = new PGSimpleDataSource();
        ds.setURL(args[1]);
        List<String> objects = new ArrayList<>();
        for (int i = 1; i <= OBJECTS; i++) {
            objects.add("bench_" + i);
        }
        SyncEngine engine = engine(ds, args[2], Coordination.builder().instanceId(args[2])
                .leaseDuration(Duration.ofMillis(Long.parseLong(args[3]))).build(), objects).build();
        engine.start();
        try (BufferedReader in = new BufferedReader(new InputStreamReader(System.in, StandardCharsets.UTF_8))) {
            while (in.readLine() != null) {
                // until killed
            }
        }
        engine.close();
    }

    private static double median(List<Double> values) {
        List<Double> sorted = new ArrayList<>(values);
        Collections.sort(sorted);
        int n = sorted.size();
        return n % 2 == 1 ? sorted.get(n / 2) : (sorted.get(n / 2 - 1) + sorted.get(n / 2)) / 2;
    }
}
