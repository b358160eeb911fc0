package io.tidemark.benchmarks.destinations.jdbc;

import io.tidemark.destinations.files.JsonLinesFileDestination;
import io.tidemark.destinations.jdbc.JdbcTableDestination;
import io.tidemark.sync.Change;
import io.tidemark.sync.ChangeBatch;
import io.tidemark.sync.Operation;
import io.tidemark.sync.SyncType;
import io.tidemark.sync.spi.Destination;
import io.tidemark.testing.EmbeddedPostgresServer;
import io.tidemark.testing.PooledDataSource;
import io.tidemark.testing.TestDatabase;

import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Comparator;
import java.util.List;
import java.util.Locale;
import java.util.stream.Stream;

/**
 * The JDBC table destination against a plain batched JDBC upsert of the same rows, and the JSON-lines file
 * destination's throughput (destinations/README-jdbc.md, benchmarks/README-destinations-jdbc.md).
 *
 * <p>Each round applies the same pages to two identical tables: {@code pages} pages of {@code pageSize} inserts,
 * then the same rows again as updates. The destination gets them as the engine hands them over (each change the
 * procedure's raw JSON, parsed on first use); the baseline is what an application would write in a callback: parse
 * the same JSON, bind the five columns, one batched {@code INSERT ... ON CONFLICT DO UPDATE} and one commit per page.
 * Both tables are emptied before each round (not timed); both
 * take a pooled connection per page. Pages alternate between the two (which goes first alternates too), each page
 * timed on its own, so both meet the same moments of a shared machine. Figures are medians of the measured rounds,
 * after two warm-up rounds; the ratio is the median of the per-round ratios. Arguments: page size (1000), pages
 * (20), measured rounds (7), and {@code rewrite} to turn on pgjdbc's {@code reWriteBatchedInserts} for both.
 */
public final class JdbcTableBenchmark {

    private static final String BASELINE_UPSERT = """
            INSERT INTO bench.base_items (id, name, price, qty, updated_at)
            VALUES (?, ?, ?, ?, ?::timestamptz)
            ON CONFLICT (id) DO UPDATE
               SET name = EXCLUDED.name, price = EXCLUDED.price, qty = EXCLUDED.qty,
                   updated_at = EXCLUDED.updated_at""";

    private JdbcTableBenchmark() {
    }

    public static void main(String[] args) throws Exception {
        int pageSize = args.length > 0 ? Integer.parseInt(args[0]) : 1000;
        int pages = args.length > 1 ? Integer.parseInt(args[1]) : 20;
        int rounds = args.length > 2 ? Integer.parseInt(args[2]) : 7;
        boolean rewrite = args.length > 3 && args[3].equals("rewrite");
        int warmUp = 2;
        try (TestDatabase database = EmbeddedPostgresServer.shared().createDatabase();
             PooledDataSource pool = PooledDataSource.of(rewritten(database.dataSource(), rewrite), 2)) {
            database.execute("""
                    CREATE SCHEMA bench;
                    CREATE TABLE bench.dest_items (id bigint PRIMARY KEY, name text NOT NULL, price numeric(12, 2),
                                                   qty integer, updated_at timestamptz);
                    CREATE TABLE bench.base_items (LIKE bench.dest_items INCLUDING ALL);""");
            JdbcTableDestination destination = JdbcTableDestination.postgres(pool, "bench.dest_items")
                    .name("bench").columns("id", "name", "price", "qty", "updated_at").keyColumns("id").build();
            Path folder = Files.createTempDirectory("tidemark-files-bench");
            JsonLinesFileDestination files = JsonLinesFileDestination.builder(folder).build();
            JsonLinesFileDestination gzipFiles = JsonLinesFileDestination.builder(folder).prefix("gz").gzip(true)
                    .build();

            long changes = 2L * pages * pageSize;
            System.out.printf(Locale.ROOT, "%d rounds (after %d warm-up), each %,d changes: %d pages of %,d inserts"
                    + " then the same rows as updates; pgjdbc reWriteBatchedInserts=%s%n", rounds, warmUp, changes,
                    pages, pageSize, rewrite);
            List<Double> table = new ArrayList<>();
            List<Double> baseline = new ArrayList<>();
            List<Double> jsonl = new ArrayList<>();
            List<Double> jsonlGzip = new ArrayList<>();
            for (int round = 0; round < rounds + warmUp; round++) {
                truncate(pool);
                long versionBase = (round + 1) * 1_000_000_000L; // new cycles every round: nothing is skipped
                // Built before the clock starts, one list per variant: building is not measured, parsing is.
                List<ChangeBatch> forTable = pages(versionBase, pages, pageSize);
                List<ChangeBatch> forBaseline = pages(versionBase, pages, pageSize);
                List<ChangeBatch> forFiles = pages(versionBase, pages, pageSize);
                List<ChangeBatch> forGzip = pages(versionBase, pages, pageSize);
                // Page by page, alternating which goes first, so both see the same moments of a loaded machine.
                long tableNanos = 0;
                long baselineNanos = 0;
                for (int i = 0; i < forTable.size(); i++) {
                    boolean tableFirst = (round + i) % 2 == 0;
                    if (tableFirst) {
                        tableNanos += nanos(destination, forTable.get(i));
                    }
                    baselineNanos += baseline(pool, forBaseline.get(i));
                    if (!tableFirst) {
                        tableNanos += nanos(destination, forTable.get(i));
                    }
                }
                double t = changes / (tableNanos / 1e9);
                double b = changes / (baselineNanos / 1e9);
                double f = rate(changes, () -> deliverAll(files, forFiles));
                double g = rate(changes, () -> deliverAll(gzipFiles, forGzip));
                clear(folder);
                check(pool, pages * pageSize);
                if (round >= warmUp) {
                    table.add(t);
                    baseline.add(b);
                    jsonl.add(f);
                    jsonlGzip.add(g);
                }
                System.out.printf(Locale.ROOT, "round %d%s: table %,.0f/s, baseline %,.0f/s, ratio %.3f;"
                        + " files %,.0f/s, gzip %,.0f/s%n", round + 1, round < warmUp ? " (warm-up)" : "", t, b,
                        t / b, f, g);
            }
            System.out.printf(Locale.ROOT, "%nJDBC table destination: median %,.0f changes/s%n", median(table));
            System.out.printf(Locale.ROOT, "plain batched upsert:   median %,.0f changes/s%n", median(baseline));
            List<Double> ratios = new ArrayList<>();
            for (int i = 0; i < table.size(); i++) {
                ratios.add(table.get(i) / baseline.get(i));
            }
            System.out.printf(Locale.ROOT, "ratio (median of the per-round ratios): %.3f  (target >= 0.8)%n",
                    median(ratios));
            System.out.printf(Locale.ROOT, "JSON-lines files:        median %,.0f changes/s (fsync on)%n",
                    median(jsonl));
            System.out.printf(Locale.ROOT, "JSON-lines files, gzip:  median %,.0f changes/s (fsync on)%n",
                    median(jsonlGzip));
            Files.delete(folder);
        } finally {
            EmbeddedPostgresServer.shared().close();
        }
    }

    /**
     * With {@code rewrite}, pgjdbc's own multi-row rewriting of batched inserts ({@code reWriteBatchedInserts}), for
     * both variants: the strongest plain baseline the driver offers.
     */
    private static javax.sql.DataSource rewritten(javax.sql.DataSource dataSource, boolean rewrite) {
        if (rewrite) {
            ((org.postgresql.ds.PGSimpleDataSource) dataSource).setReWriteBatchedInserts(true);
        }
        return dataSource;
    }

    /** The round's pages, built fresh (raw JSON, parsed on first use) so no variant reuses another's parse. */
    private static List<ChangeBatch> pages(long versionBase, int pages, int pageSize) {
        List<ChangeBatch> out = new ArrayList<>(2 * pages);
        for (Operation op : new Operation[] {Operation.INSERT, Operation.UPDATE}) {
            for (int p = 0; p < pages; p++) {
                long from = versionBase + (op == Operation.INSERT ? 0 : pages) * (long) pageSize + (long) p * pageSize;
                List<Change> changes = new ArrayList<>(pageSize);
                for (int i = 0; i < pageSize; i++) {
                    long id = (long) p * pageSize + i;
                    long version = from + i + 1;
                    String json = "{\"$operation\":\"" + op.code() + "\",\"$version\":" + version + ",\"id\":" + id
                            + ",\"name\":\"item " + id + (op == Operation.UPDATE ? " v2" : "") + "\",\"price\":"
                            + (id % 10_000) + "." + (op == Operation.UPDATE ? "75" : "50") + ",\"qty\":" + (id % 97)
                            + ",\"updated_at\":\"2026-12-01T10:" + (10 + id % 50) + ":00Z\"}";
                    changes.add(Change.fromRaw(op, version, null, json.getBytes(StandardCharsets.UTF_8)));
                }
                out.add(new ChangeBatch("Items", from, from + pageSize, SyncType.DIFF, 0, changes, 1, 1, pageSize));
            }
        }
        return out;
    }

    private static void deliverAll(Destination destination, List<ChangeBatch> pages) throws Exception {
        for (ChangeBatch page : pages) {
            destination.deliver(page);
        }
    }

    private static long nanos(Destination destination, ChangeBatch page) throws Exception {
        long started = System.nanoTime();
        destination.deliver(page);
        return System.nanoTime() - started;
    }

    /**
     * What an application would write in a callback, for one page: take a pooled connection, parse, bind five
     * columns, one batch, one commit. Returns the nanoseconds it took.
     */
    private static long baseline(PooledDataSource pool, ChangeBatch page) throws SQLException {
        long started = System.nanoTime();
        try (Connection c = pool.getConnection()) {
            c.setAutoCommit(false);
            try (PreparedStatement ps = c.prepareStatement(BASELINE_UPSERT)) {
                for (Change change : page.changes()) {
                    var f = change.fields();
                    ps.setLong(1, f.get("id").longValue());
                    ps.setString(2, f.get("name").textValue());
                    ps.setBigDecimal(3, f.get("price").decimalValue());
                    ps.setInt(4, f.get("qty").intValue());
                    ps.setString(5, f.get("updated_at").textValue());
                    ps.addBatch();
                }
                ps.executeBatch();
            }
            c.commit();
            c.setAutoCommit(true);
        }
        return System.nanoTime() - started;
    }

    private static void truncate(PooledDataSource pool) throws SQLException {
        try (Connection c = pool.getConnection(); Statement s = c.createStatement()) {
            s.execute("TRUNCATE bench.dest_items, bench.base_items");
        }
    }

    /** Both tables hold the same rows after a round, or the comparison is void. */
    private static void check(PooledDataSource pool, long rows) throws SQLException {
        try (Connection c = pool.getConnection(); Statement s = c.createStatement();
             var rs = s.executeQuery("""
                     SELECT (SELECT count(*) FROM bench.dest_items),
                            (SELECT count(*) FROM (SELECT * FROM bench.dest_items
                                                   EXCEPT SELECT * FROM bench.base_items) d)""")) {
            rs.next();
            if (rs.getLong(1) != rows || rs.getLong(2) != 0) {
                throw new IllegalStateException("the tables differ: " + rs.getLong(1) + " rows, " + rs.getLong(2)
                        + " not in the baseline's table");
            }
        }
    }

    private static void clear(Path folder) throws Exception {
        try (Stream<Path> s = Files.list(folder)) {
            for (Path p : s.sorted(Comparator.reverseOrder()).toList()) {
                Files.delete(p);
            }
        }
    }

    private interface Work {
        void run() throws Exception;
    }

    private static double rate(long changes, Work work) throws Exception {
        long started = System.nanoTime();
        work.run();
        return changes / ((System.nanoTime() - started) / 1e9);
    }

    private static double median(List<Double> values) {
        double[] sorted = values.stream().mapToDouble(Double::doubleValue).toArray();
        Arrays.sort(sorted);
        int n = sorted.length;
        return n % 2 == 1 ? sorted[n / 2] : (sorted[n / 2 - 1] + sorted[n / 2]) / 2;
    }
}
