package io.tidemark.benchmarks.history;

import io.tidemark.history.ChangeContext;
import io.tidemark.history.ContextualDataSource;
import io.tidemark.history.Db;
import io.tidemark.history.HistoryQueries;
import io.tidemark.history.InvariantViolation;
import io.tidemark.testing.EmbeddedPostgresServer;
import io.tidemark.testing.TestDatabase;

import javax.sql.DataSource;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Timestamp;
import java.time.Instant;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;

/**
 * History write overhead and as-of latency, every figure against its baseline measured in the same run.
 *
 * <p>For 1-, 100- and 1000-row INSERT, UPDATE and DELETE statements it times a plain table, Tidemark's trigger and
 * the reference shape, interleaved round-robin so drift on a shared machine hits all three alike; then the same
 * with change context: Tidemark sends it with the statement (ContextualDataSource), the reference in its own
 * statement inside a transaction, as the reference document describes. Both histories hold {@code keys * versions}
 * rows before the first statement. Then it times as-of queries for one key and for the whole table.
 *
 * <pre>java -cp benchmarks/target/benchmarks.jar io.tidemark.benchmarks.history.HistoryBenchmark [keys] [versions]</pre>
 */
public final class HistoryBenchmark {

    private static final ChangeContext CONTEXT = ChangeContext.builder().changedBy("u-1042")
            .changedByName("Bench User").correlationId("req-5f2c").reason("benchmark").build();
    private static final String[] TABLES = {"bench_plain", "bench_tm", "bench_tms", "bench_ref"};

    private final DataSource ds;
    /** One warm connection for every statement, and the same one wrapped for Tidemark's context push. */
    private final Connection direct;
    private final Connection contextual;
    private long nextKey;

    private HistoryBenchmark(DataSource ds, long firstFreeKey) throws SQLException {
        this.ds = ds;
        this.direct = ds.getConnection();
        this.contextual = ContextualDataSource.wrap(direct, () -> CONTEXT, "tidemark");
        this.nextKey = firstFreeKey;
    }

    public static void main(String[] args) throws Exception {
        int keys = args.length > 0 ? Integer.parseInt(args[0]) : 100_000;
        int versions = args.length > 1 ? Integer.parseInt(args[1]) : 10;
        try (TestDatabase db = EmbeddedPostgresServer.shared().createDatabase()) {
            long started = System.nanoTime();
            BenchSchema.create(db.dataSource(), keys, versions);
            System.out.printf(Locale.ROOT, "Loaded %,d history rows per history table in %.1f s%n",
                    Db.count(db.dataSource(), "SELECT count(*) FROM bench_tm_history"),
                    (System.nanoTime() - started) / 1e9);
            HistoryBenchmark bench = new HistoryBenchmark(db.dataSource(), keys + 1L);
            System.out.println();
            System.out.println("| rows | statement | context | plain | reference | Tidemark row | Tidemark statement"
                    + " | overhead: reference | row | statement | row / reference | statement / reference |");
            System.out.println("|---:|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|");
            for (int rows : new int[] {1, 100, 1000}) {
                int reps = rows == 1 ? 1500 : rows == 100 ? 250 : 50;
                for (boolean context : new boolean[] {false, true}) {
                    bench.statements(rows, reps, context, keys);
                }
            }
            System.out.println();
            bench.asOf(keys);
            for (var table : List.of(BenchSchema.TIDEMARK, BenchSchema.TIDEMARK_STATEMENT)) {
                List<InvariantViolation> violations = table.checkInvariants(db.dataSource());
                System.out.printf(Locale.ROOT, "%nHistory of %s after the run: %,d rows; invariant violations: %d",
                        table.table(), Db.count(db.dataSource(), "SELECT count(*) FROM "
                                + table.historyTable().quoted()), violations.size());
            }
            System.out.println();
        }
        System.exit(0);
    }

    /** Warm-up, then reps rounds of insert N new keys, update N existing keys, delete the N new keys, per table. */
    private void statements(int rows, int reps, boolean context, int keys) throws SQLException {
        Map<String, Timings[]> timings = new LinkedHashMap<>();
        for (String table : TABLES) {
            timings.put(table, new Timings[] {new Timings(reps), new Timings(reps), new Timings(reps)});
        }
        int warmup = Math.max(5, reps / 10);
        for (int rep = -warmup; rep < reps; rep++) {
            long first = nextKey;
            nextKey += rows;
            long existing = 1 + Math.floorMod((long) rep * rows * 7919L, keys - rows);
            for (int t = 0; t < TABLES.length; t++) {
                String table = TABLES[(t + Math.floorMod(rep, TABLES.length)) % TABLES.length]; // rotate the order
                Timings[] tt = timings.get(table);
                long ins = run(table, context, "INSERT INTO " + table + " SELECT g, g % 1000, 100, 'active', 'new', now()"
                        + " FROM generate_series(?::bigint, ?::bigint) g", first, first + rows - 1);
                long upd = run(table, context, "UPDATE " + table + " SET amount = amount + 1, updated_at = now()"
                        + " WHERE id BETWEEN ? AND ?", existing, existing + rows - 1);
                long del = run(table, context, "DELETE FROM " + table + " WHERE id BETWEEN ? AND ?", first,
                        first + rows - 1);
                if (rep >= 0) {
                    tt[0].add(ins);
                    tt[1].add(upd);
                    tt[2].add(del);
                }
            }
        }
        String[] names = {"INSERT", "UPDATE", "DELETE"};
        for (int s = 0; s < 3; s++) {
            double plain = timings.get("bench_plain")[s].medianMicros();
            double tm = timings.get("bench_tm")[s].medianMicros();
            double tms = timings.get("bench_tms")[s].medianMicros();
            double ref = timings.get("bench_ref")[s].medianMicros();
            System.out.printf(Locale.ROOT, "| %d | %s | %s | %.0f | %.0f | %.0f | %.0f | %.0f | %.0f | %.0f | %.2f | %.2f |%n",
                    rows, names[s], context ? "yes" : "no", plain, ref, tm, tms, ref - plain, tm - plain, tms - plain,
                    (tm - plain) / (ref - plain), (tms - plain) / (ref - plain));
        }
    }

    /**
     * One statement, as the application would send it, timed from the client: auto-commit without context;
     * with context, Tidemark's table through ContextualDataSource (one round trip), the reference's inside a
     * transaction with the push as its own statement (the reference's documented way). The plain table has no
     * trigger to read context, so it runs the statement alone either way.
     */
    private long run(String table, boolean context, String sql, long from, long to) throws SQLException {
        boolean tidemark = table.startsWith("bench_tm");
        boolean reference = table.equals("bench_ref");
        Connection c = context && tidemark ? contextual : direct;
        try (PreparedStatement ps = c.prepareStatement(sql);
             PreparedStatement push = c.prepareStatement("SELECT set_config('tidemark.changed_by', ?, true),"
                     + " set_config('tidemark.changed_by_name', ?, true), set_config('tidemark.correlation_id', ?, true),"
                     + " set_config('tidemark.reason', ?, true), set_config('tidemark.extra', '', true)")) {
            ps.setLong(1, from);
            ps.setLong(2, to);
            long start = System.nanoTime();
            if (context && reference) {
                c.setAutoCommit(false);
                push.setString(1, CONTEXT.changedBy().orElseThrow());
                push.setString(2, CONTEXT.changedByName().orElseThrow());
                push.setString(3, CONTEXT.correlationId().orElseThrow());
                push.setString(4, CONTEXT.reason().orElseThrow());
                push.executeQuery().close();
                ps.executeUpdate();
                c.commit();
                c.setAutoCommit(true);
            } else {
                ps.executeUpdate();
            }
            return System.nanoTime() - start;
        }
    }

    private void asOf(int keys) throws SQLException {
        // Like an application with a connection pool: the queries borrow a warm connection.
        HistoryQueries queries = BenchSchema.TIDEMARK.queries(new OneConnectionDataSource(direct));
        Instant at = Instant.now().minusSeconds(3 * 86_400 + 3600);  // in the middle of the preloaded chains
        Timings tmKey = new Timings(500);
        Timings refKey = new Timings(500);
        String refKeySql = "SELECT * FROM bench_ref_history WHERE id = ? AND valid_from <= ? AND valid_to > ?"
                + " ORDER BY valid_from DESC LIMIT 1";
        try (Connection c = ds.getConnection(); PreparedStatement ref = c.prepareStatement(refKeySql)) {
            for (int i = -50; i < 500; i++) {
                long key = 1 + Math.floorMod(i * 7919L, keys);
                long t0 = System.nanoTime();
                queries.asOf(at, key).orElseThrow();
                long t1 = System.nanoTime();
                ref.setLong(1, key);
                ref.setTimestamp(2, Timestamp.from(at));
                ref.setTimestamp(3, Timestamp.from(at));
                try (ResultSet rs = ref.executeQuery()) {
                    rs.next();
                }
                long t2 = System.nanoTime();
                if (i >= 0) {
                    tmKey.add(t1 - t0);
                    refKey.add(t2 - t1);
                }
            }
        }
        System.out.println("| as-of query | median µs | p90 µs |");
        System.out.println("|---|---:|---:|");
        System.out.printf(Locale.ROOT, "| one key, HistoryQueries.asOf(at, key) (rows and registry check in one round trip, warm connection) | %.0f | %.0f |%n",
                tmKey.medianMicros(), tmKey.p90Micros());
        System.out.printf(Locale.ROOT, "| one key, same query on the reference history (prepared, warm connection) | %.0f | %.0f |%n",
                refKey.medianMicros(), refKey.p90Micros());
        Timings ref = new Timings(10);
        long refRows = 0;
        try (PreparedStatement snapshot = direct.prepareStatement("SELECT count(*) FROM bench_ref_history"
                + " WHERE valid_from <= ? AND valid_to > ?")) {
            for (int i = -2; i < 10; i++) {
                snapshot.setTimestamp(1, Timestamp.from(at));
                snapshot.setTimestamp(2, Timestamp.from(at));
                long t0 = System.nanoTime();
                try (ResultSet rs = snapshot.executeQuery()) {
                    rs.next();
                    refRows = rs.getLong(1);
                }
                if (i >= 0) {
                    ref.add(System.nanoTime() - t0);
                }
            }
        }
        System.out.printf(Locale.ROOT, "| whole table (%,d rows), same count on the reference history | %.0f | %.0f |%n",
                refRows, ref.medianMicros(), ref.p90Micros());
        snapshots(queries, at, "no period index (default)");
        Db.exec(ds, "CREATE INDEX bench_tm_history_period_idx ON bench_tm_history"
                + " USING gist (tstzrange(valid_from, valid_to)); ANALYZE bench_tm_history");
        snapshots(queries, at, "with periodIndex(true)");
    }

    private void snapshots(HistoryQueries queries, Instant at, String variant) throws SQLException {
        Timings fn = new Timings(10);
        Timings javaSnapshot = new Timings(10);
        long rows = 0;
        try (PreparedStatement snapshot = direct.prepareStatement("SELECT count(*) FROM bench_tm_as_of(?)")) {
            for (int i = -2; i < 10; i++) {
                snapshot.setTimestamp(1, Timestamp.from(at));
                long t0 = System.nanoTime();
                try (ResultSet rs = snapshot.executeQuery()) {
                    rs.next();
                    rows = rs.getLong(1);
                }
                long t1 = System.nanoTime();
                int size = queries.asOf(at).size();
                long t2 = System.nanoTime();
                if (size != rows) {
                    throw new IllegalStateException("snapshot sizes differ: " + size + " vs " + rows);
                }
                if (i >= 0) {
                    fn.add(t1 - t0);
                    javaSnapshot.add(t2 - t1);
                }
            }
        }
        System.out.printf(Locale.ROOT, "| whole table (%,d rows), SELECT count(*) FROM bench_tm_as_of(at), %s | %.0f | %.0f |%n",
                rows, variant, fn.medianMicros(), fn.p90Micros());
        System.out.printf(Locale.ROOT, "| whole table (%,d rows), HistoryQueries.asOf(at) into Java objects, %s | %.0f | %.0f |%n",
                rows, variant, javaSnapshot.medianMicros(), javaSnapshot.p90Micros());
    }
}
