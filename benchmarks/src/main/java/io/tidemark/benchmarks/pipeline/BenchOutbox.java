package io.tidemark.benchmarks.pipeline;

import io.tidemark.postgres.PostgresOutbox;

import javax.sql.DataSource;
import java.sql.Connection;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;

/**
 * The benchmark's source: a table {@code public.bench_items} with Tidemark's generated outbox
 * ({@link PostgresOutbox}), so the benchmark reads changes the way a user's engine does. A change renders as about
 * 120 bytes of JSON.
 */
final class BenchOutbox {

    private final PostgresOutbox outbox;
    private final long seed;

    private BenchOutbox(PostgresOutbox outbox, long seed) {
        this.outbox = outbox;
        this.seed = seed;
    }

    /** Creates the table, installs its outbox and notes the version from which the changes written next start. */
    static BenchOutbox create(DataSource dataSource) throws SQLException {
        execute(dataSource, "CREATE TABLE public.bench_items (item_code text PRIMARY KEY, description text,"
                + " price numeric(10,2))");
        PostgresOutbox outbox = PostgresOutbox.forTable("public.bench_items")
                .payloadKey("item_code", "ItemCode")
                .payloadKey("description", "Description")
                .payloadKey("price", "Price")
                .build();
        outbox.install(dataSource);
        long seed = scalar(dataSource, "SELECT (" + outbox.changeFunction()
                + "('{\"fromVersion\":0,\"mode\":\"seed\"}') #>> '{Metadata,Sync,Version}')::bigint");
        return new BenchOutbox(outbox, seed);
    }

    String function() {
        return outbox.changeFunction();
    }

    /** The version before the first change written by {@link #fill}: where an incremental reader starts. */
    long seed() {
        return seed;
    }

    /** The request that asks for every change written by {@link #fill}. */
    String requestAll() {
        return "{\"fromVersion\":" + seed + ",\"mode\":\"sync\"}";
    }

    /** Inserts {@code transactions} transactions of {@code rowsPerTransaction} rows each; each is one change. */
    static void fill(DataSource dataSource, int transactions, int rowsPerTransaction) throws SQLException {
        try (Connection c = dataSource.getConnection(); Statement s = c.createStatement()) {
            c.setAutoCommit(true);
            for (int t = 0; t < transactions; t++) {
                s.execute("INSERT INTO public.bench_items (item_code, description, price)"
                        + " SELECT 'ITEM-' || lpad(g::text, 9, '0'), 'Item ' || g || ' of the product catalogue',"
                        + " (g % 10000) / 100.0 FROM generate_series(" + ((long) t * rowsPerTransaction + 1) + ", "
                        + ((long) (t + 1) * rowsPerTransaction) + ") g");
            }
            s.execute("VACUUM ANALYZE public.bench_items, public.bench_items_outbox");
        }
    }

    static long count(DataSource dataSource) throws SQLException {
        return scalar(dataSource, "SELECT count(*) FROM public.bench_items_outbox");
    }

    private static long scalar(DataSource dataSource, String sql) throws SQLException {
        try (Connection c = dataSource.getConnection(); Statement s = c.createStatement();
             ResultSet rs = s.executeQuery(sql)) {
            rs.next();
            return rs.getLong(1);
        }
    }

    private static void execute(DataSource dataSource, String sql) throws SQLException {
        try (Connection c = dataSource.getConnection(); Statement s = c.createStatement()) {
            s.execute(sql);
        }
    }
}
