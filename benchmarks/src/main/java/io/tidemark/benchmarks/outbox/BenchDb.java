package io.tidemark.benchmarks.outbox;

import javax.sql.DataSource;
import java.io.IOException;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import java.sql.Connection;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;

/** Small helpers shared by the outbox benchmarks: running SQL, and summarising timings. */
final class BenchDb {

    private BenchDb() {
    }

    static void execute(DataSource ds, String sql) throws SQLException {
        try (Connection c = ds.getConnection(); Statement s = c.createStatement()) {
            s.execute(sql);
        }
    }

    /**
     * {@code public.items (item_code, description)} with the reference trigger and change function of the contract's
     * gap example on it ({@code public.items_outbox}, {@code public.get_item_changes(json)}).
     */
    static void createItemsWithReference(DataSource ds) throws SQLException, IOException {
        execute(ds, "CREATE TABLE public.items (item_code text PRIMARY KEY, description text)");
        execute(ds, referenceSql());
    }

    static long scalar(DataSource ds, String sql) throws SQLException {
        try (Connection c = ds.getConnection(); Statement s = c.createStatement(); ResultSet rs = s.executeQuery(sql)) {
            rs.next();
            return rs.getLong(1);
        }
    }

    /** The identity-as-version outbox, trigger and change function (docs/contract.md#the-in-flight-transaction-gap), verbatim. */
    static String referenceSql() throws IOException {
        try (InputStream in = BenchDb.class.getResourceAsStream(
                "/io/tidemark/testing/reference/procedure-contract-postgres.sql")) {
            if (in == null) {
                throw new IOException("the reference SQL is missing from tidemark-testing");
            }
            return new String(in.readAllBytes(), StandardCharsets.UTF_8);
        }
    }

    /** The q-quantile (0..1) of the values, nearest rank. */
    static double quantile(List<? extends Number> values, double q) {
        List<Double> sorted = new ArrayList<>();
        values.forEach(v -> sorted.add(v.doubleValue()));
        Collections.sort(sorted);
        int index = (int) Math.ceil(q * sorted.size()) - 1;
        return sorted.get(Math.max(0, Math.min(sorted.size() - 1, index)));
    }

    static double median(List<? extends Number> values) {
        return quantile(values, 0.5);
    }
}
