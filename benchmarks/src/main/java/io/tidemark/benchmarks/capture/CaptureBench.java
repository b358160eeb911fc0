package io.tidemark.benchmarks.capture;

import org.postgresql.ds.PGSimpleDataSource;

import javax.sql.DataSource;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Locale;

/** What the capture-cost benchmarks share: the benchmark row, running SQL and percentiles (/proc: ProcStat). */
final class CaptureBench {

    /**
     * A realistic row of about 150 bytes on disk: a bigint key, text, int, numeric and timestamptz columns. Both
     * benchmarks write this shape, so their figures describe the same row.
     */
    static final String COLUMNS = """
            id          bigint         PRIMARY KEY,
            sku         text           NOT NULL,
            name        text           NOT NULL,
            warehouse   text           NOT NULL,
            qty         integer        NOT NULL,
            price       numeric(12,2)  NOT NULL,
            status      text           NOT NULL,
            updated_at  timestamptz    NOT NULL""";

    /** One row per g of generate_series(?, ?), with the same values a single-row INSERT binds for that id. */
    static final String GENERATED_ROWS = """
            SELECT g, 'SKU-' || lpad(g::text, 10, '0'), 'Item ' || g || ' of the product catalogue, colour blue',
                   'WH-NORTH-' || lpad((g % 20)::text, 2, '0'), (g % 100)::integer,
                   ((g % 100000) / 100.0)::numeric(12,2),
                   'active', now()
              FROM generate_series(?::bigint, ?::bigint) AS g""";

    /** A single-row INSERT of the benchmark row; bind it with {@link #bindRow}. */
    static final String INSERT_ONE = "INSERT INTO %s (id, sku, name, warehouse, qty, price, status, updated_at)"
            + " VALUES (?, ?, ?, ?, ?, ?, 'active', now())";

    private CaptureBench() {
    }

    static void bindRow(java.sql.PreparedStatement s, long id) throws SQLException {
        s.setLong(1, id);
        s.setString(2, String.format(Locale.ROOT, "SKU-%010d", id));
        s.setString(3, "Item " + id + " of the product catalogue, colour blue");
        s.setString(4, String.format(Locale.ROOT, "WH-NORTH-%02d", id % 20));
        s.setInt(5, (int) (id % 100));
        s.setBigDecimal(6, java.math.BigDecimal.valueOf(id % 100_000, 2));
    }

    /**
     * Connections to the benchmark database under their own {@code application_name}, so that the backends of the
     * engine, the writers and the benchmark's own bookkeeping can be told apart in {@code pg_stat_activity}.
     */
    static DataSource dataSource(String jdbcUrl, String applicationName) {
        PGSimpleDataSource ds = new PGSimpleDataSource();
        ds.setURL(jdbcUrl);
        ds.setApplicationName(applicationName);
        return ds;
    }

    /** The superuser's connection properties under {@code applicationName}, for connections a pool cannot lend. */
    static java.util.Properties connectionProperties(String applicationName) {
        java.util.Properties p = new java.util.Properties();
        p.setProperty("user", "postgres");
        p.setProperty("ApplicationName", applicationName);
        return p;
    }

    static void execute(DataSource ds, String sql) throws SQLException {
        try (Connection c = ds.getConnection(); Statement s = c.createStatement()) {
            s.execute(sql);
        }
    }

    static String text(Connection c, String sql) throws SQLException {
        try (Statement s = c.createStatement(); ResultSet rs = s.executeQuery(sql)) {
            rs.next();
            return rs.getString(1);
        }
    }

    static int backendPid(Connection c) throws SQLException {
        return Integer.parseInt(text(c, "SELECT pg_backend_pid()"));
    }

    /** The machine's 1-minute load average, to say how loaded a run was. */
    static String loadAverage() {
        try {
            return Files.readString(Path.of("/proc/loadavg")).split(" ")[0];
        } catch (IOException e) {
            return "unknown";
        }
    }

    /** The q-quantile (0..1) of the values, nearest rank. */
    static double quantile(List<? extends Number> values, double q) {
        if (values.isEmpty()) {
            return Double.NaN;
        }
        List<Double> sorted = new ArrayList<>();
        values.forEach(v -> sorted.add(v.doubleValue()));
        Collections.sort(sorted);
        int index = (int) Math.ceil(q * sorted.size()) - 1;
        return sorted.get(Math.max(0, Math.min(sorted.size() - 1, index)));
    }

    static double median(List<? extends Number> values) {
        return quantile(values, 0.5);
    }

    /** PASS or MISS, for a figure printed beside its target. */
    static String verdict(boolean met) {
        return met ? "PASS" : "MISS";
    }
}
