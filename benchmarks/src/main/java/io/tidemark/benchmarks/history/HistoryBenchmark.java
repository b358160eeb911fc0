package io.tidemark.benchmarks.history;

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
import java.util.Arrays;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;

/**
 * History write overhead and as-of latency, every figure against its baseline measured in the same run.
 *
 * <p>Six statements — UPDATE of 100 rows by key range, UPDATE of 1 row by key, INSERT of 1 and of 100 rows, DELETE of
 * 1 and of 100 rows — on a plain table, the reference trigger, Tidemark's history table shape with row and with
 * statement triggers, its current-in-table shape in the same two modes and the {@link DesignBounds} tables, all holding the same rows and preloaded histories. Three rounds, interleaved: each
 * round runs every statement size on every table, the tables' order rotated repetition by repetition so drift on a
 * shared machine hits all alike. Overhead is a statement's latency minus the plain table's in the same repetition;
 * a cell is the median over the three rounds of each round's median overhead, reported as a fraction of the
 * reference's. Then as-of queries for one key and for the whole table.
 *
 * <pre>java -cp benchmarks/target/benchmarks.jar io.tidemark.benchmarks.history.HistoryBenchmark [keys] [versions]</pre>
 */
public final class HistoryBenchmark {

    private static final String PLAIN = "bench_plain";
    private static final String REFERENCE = "bench_ref";
    private static final String ROW = "bench_tm";
    private static final String STATEMENT = "bench_tms";
    private static final String CURRENT = "bench_tmcur";
    private static final String CURRENT_STATEMENT = "bench_tmcurs";
    private static final String[] TABLES = {PLAIN, REFERENCE, ROW, STATEMENT, CURRENT, CURRENT_STATEMENT, DesignBounds.BARE,
            DesignBounds.BARE_INVOKER, DesignBounds.ONE_ROW, DesignBounds.CURRENT_IN_TABLE};
    /** The columns of the summary table after plain and reference: table and heading. */
    private static final String[][] COLUMNS = {
            {ROW, "Tidemark HISTORY_TABLE, ROW"},
            {STATEMENT, "Tidemark HISTORY_TABLE, STATEMENT"},
            {CURRENT, "Tidemark CURRENT_IN_TABLE, ROW"},
            {CURRENT_STATEMENT, "Tidemark CURRENT_IN_TABLE, STATEMENT"},
            {DesignBounds.BARE, "bound: empty row trigger"},
            {DesignBounds.BARE_INVOKER, "bound: the same without SECURITY DEFINER, search_path"},
            {DesignBounds.ONE_ROW, "bound: one inserted row per change"},
            {DesignBounds.CURRENT_IN_TABLE, "bound: current version in the table, no clamp or invariant"}};
    private static final int ROUNDS = 3;

    /** The rows, in its order: what the statement is, how many rows, which of the three a repetition runs. */
    private enum Statement {
        UPDATE_100("UPDATE of 100 rows by key range", 100, 1),
        UPDATE_1("UPDATE of 1 row by key", 1, 1),
        INSERT_1("INSERT of 1 row", 1, 0),
        INSERT_100("INSERT of 100 rows", 100, 0),
        DELETE_1("DELETE of 1 row", 1, 2),
        DELETE_100("DELETE of 100 rows", 100, 2),
        // Not rows of the issue: the same inserts written as INSERT ... SELECT FROM generate_series(?, ?), which
        // PostgreSQL plans again at every execution (the generic plan's estimate of 1,000 rows loses to the custom
        // plan's exact one), so the column defaults of CURRENT_IN_TABLE are planned with every statement too.
        INSERT_SELECT_1("INSERT of 1 row as INSERT ... SELECT (planned at every execution)", 1, 3),
        INSERT_SELECT_100("INSERT of 100 rows as INSERT ... SELECT (planned at every execution)", 100, 3);

        final String label;
        final int rows;
        final int kind;

        Statement(String label, int rows, int kind) {
            this.label = label;
            this.rows = rows;
            this.kind = kind;
        }
    }

    private final DataSource ds;
    /** One warm connection for every statement. */
    private final Connection direct;
    private long nextKey;
    /** [statement][table][round] median latency in microseconds. */
    private final double[][][] medians = new double[Statement.values().length][TABLES.length][ROUNDS];
    /** [statement][table][round] median paired overhead over the plain table in microseconds. */
    private final double[][][] overheads = new double[Statement.values().length][TABLES.length][ROUNDS];

    private HistoryBenchmark(DataSource ds, long firstFreeKey) throws SQLException {
        this.ds = ds;
        this.direct = ds.getConnection();
        this.nextKey = firstFreeKey;
    }

    public static void main(String[] args) throws Exception {
        int keys = args.length > 0 ? Integer.parseInt(args[0]) : 100_000;
        int versions = args.length > 1 ? Integer.parseInt(args[1]) : 10;
        try (TestDatabase db = EmbeddedPostgresServer.shared().createDatabase()) {
            long started = System.nanoTime();
            BenchSchema.create(db.dataSource(), keys, versions);
            System.out.printf(Locale.ROOT, "Loaded %,d rows per table and %,d history rows per history table in %.1f s%n",
                    Db.count(db.dataSource(), "SELECT count(*) FROM bench_plain"),
                    Db.count(db.dataSource(), "SELECT count(*) FROM bench_tm_history"),
                    (System.nanoTime() - started) / 1e9);
            HistoryBenchmark bench = new HistoryBenchmark(db.dataSource(), keys + 1L);
            for (int round = 0; round < ROUNDS; round++) {
                for (int rows : new int[] {1, 100}) {
                    bench.round(round, rows, rows == 1 ? 1000 : 150, keys);
                }
            }
            bench.printWrites();
            System.out.println();
            bench.asOf(keys);
            for (var table : BenchSchema.TIDEMARK_TABLES) {
                List<InvariantViolation> violations = table.checkInvariants(db.dataSource());
                System.out.printf(Locale.ROOT, "%nHistory of %s after the run: %,d rows; invariant violations: %d",
                        table.table(), Db.count(db.dataSource(), "SELECT count(*) FROM "
                                + table.historyTable().quoted()), violations.size());
            }
            System.out.println();
        }
        System.exit(0);
    }

    /**
     * Warm-up, then reps repetitions of: insert N new keys, update N existing keys, delete the N new keys, per table.
     * Keeps each table's median latency and its median paired overhead: the latency minus the plain table's in the
     * same repetition, which cancels drift slower than one repetition (a few milliseconds).
     */
    private void round(int round, int rows, int reps, int keys) throws SQLException {
        long[][][] nanos = new long[4][TABLES.length][reps];
        int warmup = Math.max(5, reps / 10);
        String values = String.join(", ", Collections.nCopies(rows, "(?, ?, 100, 'active', 'new', now())"));
        for (int rep = -warmup; rep < reps; rep++) {
            long first = nextKey;
            long second = first + rows;
            nextKey += 2L * rows;
            long existing = 1 + Math.floorMod((long) (rep + round * reps) * rows * 7919L, keys - rows);
            for (int i = 0; i < TABLES.length; i++) {
                int t = (i + Math.floorMod(rep, TABLES.length)) % TABLES.length; // rotate the order
                String table = TABLES[t];
                // As an application writes them: parameters bound to INSERT ... VALUES, a plan made once.
                long ins = runValues("INSERT INTO " + table + " (id, account, amount, status, note, updated_at)"
                        + " VALUES " + values, first, rows);
                long insSelect = run("INSERT INTO " + table + " SELECT g, g % 1000, 100, 'active', 'new', now()"
                        + " FROM generate_series(?::bigint, ?::bigint) g", second, second + rows - 1);
                long upd = run("UPDATE " + table + " SET amount = amount + 1, updated_at = now()"
                        + " WHERE id BETWEEN ? AND ?", existing, existing + rows - 1);
                long del = run("DELETE FROM " + table + " WHERE id BETWEEN ? AND ?", first, first + rows - 1);
                run("DELETE FROM " + table + " WHERE id BETWEEN ? AND ?", second, second + rows - 1); // not timed
                if (rep >= 0) {
                    nanos[0][t][rep] = ins;
                    nanos[1][t][rep] = upd;
                    nanos[2][t][rep] = del;
                    nanos[3][t][rep] = insSelect;
                }
            }
        }
        for (Statement statement : Statement.values()) {
            if (statement.rows == rows) {
                long[][] byTable = nanos[statement.kind];
                for (int t = 0; t < TABLES.length; t++) {
                    long[] paired = new long[reps];
                    for (int rep = 0; rep < reps; rep++) {
                        paired[rep] = byTable[t][rep] - byTable[0][rep];
                    }
                    medians[statement.ordinal()][t][round] = median(byTable[t]);
                    overheads[statement.ordinal()][t][round] = median(paired);
                }
            }
        }
    }

    private static double median(long[] nanos) {
        long[] sorted = nanos.clone();
        Arrays.sort(sorted);
        return sorted[sorted.length / 2] / 1000.0;
    }

    /** One auto-commit statement on the warm connection, timed from the client including the commit. */
    private long run(String sql, long from, long to) throws SQLException {
        try (PreparedStatement ps = direct.prepareStatement(sql)) {
            ps.setLong(1, from);
            ps.setLong(2, to);
            long start = System.nanoTime();
            ps.executeUpdate();
            return System.nanoTime() - start;
        }
    }

    /** One auto-commit INSERT ... VALUES of {@code rows} rows, keys from {@code first}, timed like {@link #run}. */
    private long runValues(String sql, long first, int rows) throws SQLException {
        try (PreparedStatement ps = direct.prepareStatement(sql)) {
            for (int r = 0; r < rows; r++) {
                ps.setLong(2 * r + 1, first + r);
                ps.setLong(2 * r + 2, (first + r) % 1000);
            }
            long start = System.nanoTime();
            ps.executeUpdate();
            return System.nanoTime() - start;
        }
    }

    private double latency(Statement statement, String table) {
        return medianOfRounds(medians, statement, table);
    }

    private double overhead(Statement statement, String table) {
        return medianOfRounds(overheads, statement, table);
    }

    private static double medianOfRounds(double[][][] values, Statement statement, String table) {
        double[] rounds = values[statement.ordinal()][List.of(TABLES).indexOf(table)].clone();
        Arrays.sort(rounds);
        return rounds[ROUNDS / 2];
    }

    private void printWrites() {
        System.out.println();
        System.out.println("Overhead (latency minus the plain table's in the same repetition) as a fraction of the"
                + " reference trigger's overhead; 1.00: as costly; target: at most 0.50. plain and reference: median"
                + " latency in ms. Each figure: the median over three rounds of each round's median.");
        System.out.println();
        StringBuilder heading = new StringBuilder("| statement | plain | reference |");
        for (String[] column : COLUMNS) {
            heading.append(' ').append(column[1]).append(" |");
        }
        System.out.println(heading);
        System.out.println("|---|" + "---:|".repeat(COLUMNS.length + 2));
        for (Statement statement : Statement.values()) {
            double reference = overhead(statement, REFERENCE);
            StringBuilder line = new StringBuilder(String.format(Locale.ROOT, "| %s | %.3f ms | %.3f ms |",
                    statement.label, latency(statement, PLAIN) / 1000, latency(statement, REFERENCE) / 1000));
            for (String[] column : COLUMNS) {
                line.append(String.format(Locale.ROOT, " %.2f |", overhead(statement, column[0]) / reference));
            }
            System.out.println(line);
        }
        System.out.println();
        System.out.println("Median latency, µs, and in brackets the median paired overhead, per round (1 / 2 / 3):");
        System.out.println();
        System.out.println("| statement | " + String.join(" | ", TABLES) + " |");
        System.out.println("|---|" + "---:|".repeat(TABLES.length));
        for (Statement statement : Statement.values()) {
            StringBuilder line = new StringBuilder("| " + statement.label + " |");
            for (int t = 0; t < TABLES.length; t++) {
                double[] r = medians[statement.ordinal()][t];
                double[] o = overheads[statement.ordinal()][t];
                line.append(t == 0
                        ? String.format(Locale.ROOT, " %.0f / %.0f / %.0f |", r[0], r[1], r[2])
                        : String.format(Locale.ROOT, " %.0f / %.0f / %.0f (%.0f / %.0f / %.0f) |", r[0], r[1], r[2],
                                o[0], o[1], o[2]));
            }
            System.out.println(line);
        }
    }

    /** One as-of query for a key (whole-table probes ignore it); returns the number of rows it answered. */
    private interface Probe {
        long run(long key) throws SQLException;
    }

    /** Binds one prepared query's parameters for a key and the instant. */
    private interface Binder {
        void bind(PreparedStatement ps, long key, Timestamp at) throws SQLException;
    }

    /**
     * Point-in-time queries, every variant of a question timed in the same loop, one after the other, so load hits
     * all alike: one key (500 times) and the whole table (10 times) on Tidemark's history through the API and as
     * bare prepared SQL, on the reference history, and on the design bounds (where a version's end is not stored,
     * the last row of the key starting at or before the instant; where the current version lives in the table, its
     * row or the history row whose period contains the instant). Then the whole table with the period index.
     */
    private void asOf(int keys) throws SQLException {
        // Like an application with a connection pool: the queries borrow a warm connection.
        HistoryQueries queries = BenchSchema.TIDEMARK.queries(new OneConnectionDataSource(direct));
        HistoryQueries current = BenchSchema.TIDEMARK_CURRENT.queries(new OneConnectionDataSource(direct));
        Instant at = Instant.now().minusSeconds(3 * 86_400 + 3600);  // in the middle of the preloaded chains
        Binder keyAndAt = (ps, key, ts) -> {
            ps.setLong(1, key);
            ps.setTimestamp(2, ts);
        };
        Binder keyAtAt = (ps, key, ts) -> {
            keyAndAt.bind(ps, key, ts);
            ps.setTimestamp(3, ts);
        };
        Binder atOnly = (ps, key, ts) -> ps.setTimestamp(1, ts);
        Map<String, Probe> oneKey = new LinkedHashMap<>();
        oneKey.put("one key, HistoryQueries.asOf(at, key) on Tidemark's history (rows and registry check in one round"
                + " trip)", key -> queries.asOf(at, key).map(r -> 1L).orElse(0L));
        oneKey.put("one key, the same as bare prepared SQL on Tidemark's history", prepared(at, keyAtAt,
                "SELECT * FROM bench_tm_history WHERE id = ? AND valid_from <= ? AND valid_to > ?"
                        + " ORDER BY valid_from DESC LIMIT 1"));
        oneKey.put("one key, HistoryQueries.asOf(at, key) on CURRENT_IN_TABLE (its history view)",
                key -> current.asOf(at, key).map(r -> 1L).orElse(0L));
        oneKey.put("one key, the same as bare prepared SQL on CURRENT_IN_TABLE's history view", prepared(at, keyAtAt,
                "SELECT * FROM bench_tmcur_history WHERE id = ? AND valid_from <= ? AND valid_to > ?"
                        + " ORDER BY valid_from DESC LIMIT 1"));
        oneKey.put("one key, the same on the reference history", prepared(at, keyAtAt,
                "SELECT * FROM bench_ref_history WHERE id = ? AND valid_from <= ? AND valid_to > ?"
                        + " ORDER BY valid_from DESC LIMIT 1"));
        oneKey.put("one key, bound: one inserted row per change", prepared(at, keyAndAt,
                "SELECT * FROM bench_one_history WHERE id = ? AND valid_from <= ? ORDER BY history_id DESC LIMIT 1"));
        oneKey.put("one key, bound: current version in the table", prepared(at, (ps, key, ts) -> {
                    keyAndAt.bind(ps, key, ts);
                    ps.setLong(3, key);
                    ps.setTimestamp(4, ts);
                    ps.setTimestamp(5, ts);
                }, "SELECT id, amount FROM bench_cur WHERE id = ? AND tm_valid_from <= ? UNION ALL (SELECT id, amount"
                        + " FROM bench_cur_history WHERE id = ? AND valid_from <= ? AND valid_to > ?"
                        + " ORDER BY valid_from DESC LIMIT 1)"));
        Map<String, Probe> wholeTable = new LinkedHashMap<>();
        wholeTable.put("whole table, SELECT count(*) FROM bench_tm_as_of(at), no period index (default)",
                prepared(at, atOnly, "SELECT count(*) FROM bench_tm_as_of(?)"));
        wholeTable.put("whole table, HistoryQueries.asOf(at) into Java objects, no period index (default)",
                key -> queries.asOf(at).size());
        wholeTable.put("whole table, SELECT count(*) FROM bench_tmcur_as_of(at), CURRENT_IN_TABLE",
                prepared(at, atOnly, "SELECT count(*) FROM bench_tmcur_as_of(?)"));
        wholeTable.put("whole table, HistoryQueries.asOf(at) into Java objects, CURRENT_IN_TABLE",
                key -> current.asOf(at).size());
        wholeTable.put("whole table, the same count on the reference history", prepared(at, (ps, key, ts) -> {
                    ps.setTimestamp(1, ts);
                    ps.setTimestamp(2, ts);
                }, "SELECT count(*) FROM bench_ref_history WHERE valid_from <= ? AND valid_to > ?"));
        wholeTable.put("whole table, bound: one inserted row per change (the last row of each key starting at or"
                + " before the instant)", prepared(at, atOnly, "SELECT count(*) FROM (SELECT DISTINCT ON (id) operation"
                + " FROM bench_one_history WHERE valid_from <= ? ORDER BY id, history_id DESC) AS s"
                + " WHERE operation <> 3"));
        wholeTable.put("whole table, bound: current version in the table (its rows and the history rows)",
                prepared(at, (ps, key, ts) -> {
                    ps.setTimestamp(1, ts);
                    ps.setTimestamp(2, ts);
                    ps.setTimestamp(3, ts);
                }, "SELECT (SELECT count(*) FROM bench_cur WHERE tm_valid_from <= ?)"
                        + " + (SELECT count(*) FROM bench_cur_history WHERE valid_from <= ? AND valid_to > ?)"));
        System.out.println("| as-of query | rows | median µs | p90 µs |");
        System.out.println("|---|---:|---:|---:|");
        interleaved(oneKey, 500, keys);
        interleaved(wholeTable, 10, keys);
        Db.exec(ds, "CREATE INDEX bench_tm_history_period_idx ON bench_tm_history"
                + " USING gist (tstzrange(valid_from, valid_to)); ANALYZE bench_tm_history");
        Map<String, Probe> indexed = new LinkedHashMap<>();
        indexed.put("whole table, SELECT count(*) FROM bench_tm_as_of(at), with periodIndex(true)",
                wholeTable.get("whole table, SELECT count(*) FROM bench_tm_as_of(at), no period index (default)"));
        indexed.put("whole table, HistoryQueries.asOf(at) into Java objects, with periodIndex(true)",
                key -> queries.asOf(at).size());
        interleaved(indexed, 10, keys);
    }

    private Probe prepared(Instant at, Binder binder, String sql) throws SQLException {
        PreparedStatement ps = direct.prepareStatement(sql);  // kept for the run, like a statement cache
        Timestamp ts = Timestamp.from(at);
        return key -> {
            binder.bind(ps, key, ts);
            long rows = 0;
            try (ResultSet rs = ps.executeQuery()) {
                while (rs.next()) {
                    rows = sql.startsWith("SELECT count(*)") || sql.startsWith("SELECT (SELECT count(*)")
                            ? rs.getLong(1) : rows + 1;
                }
            }
            return rows;
        };
    }

    private static void interleaved(Map<String, Probe> probes, int reps, int keys) throws SQLException {
        Map<String, Timings> timings = new LinkedHashMap<>();
        Map<String, Long> rows = new LinkedHashMap<>();
        probes.keySet().forEach(label -> timings.put(label, new Timings(reps)));
        for (int i = -Math.max(2, reps / 10); i < reps; i++) {
            long key = 1 + Math.floorMod(i * 7919L, keys);
            for (var probe : probes.entrySet()) {
                long t0 = System.nanoTime();
                long answered = probe.getValue().run(key);
                long elapsed = System.nanoTime() - t0;
                if (i >= 0) {
                    timings.get(probe.getKey()).add(elapsed);
                    rows.put(probe.getKey(), answered);
                }
            }
        }
        for (var entry : timings.entrySet()) {
            System.out.printf(Locale.ROOT, "| %s | %,d | %.0f | %.0f |%n", entry.getKey(), rows.get(entry.getKey()),
                    entry.getValue().medianMicros(), entry.getValue().p90Micros());
        }
    }
}
