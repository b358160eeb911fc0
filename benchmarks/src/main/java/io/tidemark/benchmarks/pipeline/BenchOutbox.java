package io.tidemark.benchmarks.pipeline;

import javax.sql.DataSource;
import java.sql.Connection;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;

/**
 * The benchmark's source: an outbox of changes about 130 bytes long each as JSON, and a gap-free change function
 * over it (versions are the writing transaction's xid, rows only below the xmin horizon, maxRows cut at
 * transaction boundaries).
 */
final class BenchOutbox {

    static final String FUNCTION = "public.bench_changes";

    private BenchOutbox() {
    }

    static void create(DataSource dataSource) throws SQLException {
        execute(dataSource, "CREATE TABLE public.bench_outbox (\n"
                + "  id bigserial PRIMARY KEY,\n"
                + "  xact_id xid8 NOT NULL DEFAULT pg_current_xact_id(),\n"
                + "  operation char(1) NOT NULL,\n"
                + "  item_code text NOT NULL,\n"
                + "  description text,\n"
                + "  price numeric(10,2));\n"
                + "CREATE INDEX bench_outbox_xact_idx ON public.bench_outbox (xact_id, id);\n"
                + "CREATE FUNCTION " + FUNCTION + "(payload json) RETURNS json\n"
                + "LANGUAGE plpgsql STABLE SET search_path = pg_catalog, pg_temp AS $$\n"
                + "DECLARE\n"
                + "  from_version bigint := COALESCE((payload ->> 'fromVersion')::bigint, 0);\n"
                + "  max_rows integer := (payload ->> 'maxRows')::integer;\n"
                + "  horizon xid8 := pg_snapshot_xmin(pg_current_snapshot());\n"
                + "  rows_json json; last_version bigint; upto xid8;\n"
                + "BEGIN\n"
                + "  IF max_rows IS NOT NULL THEN\n"
                // Whole transactions only, read in xid order from the index and stopped early.
                + "    SELECT max(t.xact_id) INTO upto FROM (\n"
                + "      SELECT xact_id, sum(count(*)) OVER (ORDER BY xact_id) - count(*) AS rows_before\n"
                + "        FROM (SELECT xact_id FROM public.bench_outbox WHERE xact_id > from_version::text::xid8 AND xact_id < horizon\n"
                + "               ORDER BY xact_id LIMIT max_rows) first_rows\n"
                + "       GROUP BY xact_id) t WHERE t.rows_before < max_rows;\n"
                + "  ELSE\n"
                + "    upto := NULL;\n"
                + "  END IF;\n"
                + "  IF coalesce(payload ->> 'mode', 'sync') <> 'seed' THEN\n"
                + "    SELECT json_agg(json_build_object('$operation', o.operation, '$version', o.xact_id::text::bigint,\n"
                + "                    'ItemCode', o.item_code, 'Description', o.description, 'Price', o.price) ORDER BY o.xact_id, o.id),\n"
                + "           max(o.xact_id::text::bigint)\n"
                + "      INTO rows_json, last_version\n"
                + "      FROM public.bench_outbox o\n"
                + "     WHERE o.xact_id > from_version::text::xid8 AND o.xact_id < horizon\n"
                + "       AND (upto IS NULL OR o.xact_id <= upto);\n"
                + "  END IF;\n"
                + "  RETURN json_build_object('Metadata', json_build_object('Sync', json_build_object(\n"
                + "           'Version', COALESCE(last_version, GREATEST(horizon::text::bigint - 1, from_version)), 'Type', 'Diff', 'ReasonCode', 0)),\n"
                + "         'Data', COALESCE(rows_json, '[]'::json));\n"
                + "END $$;");
    }

    /**
     * Adds {@code transactions} transactions of {@code rowsPerTransaction} changes each. A change renders as
     * about 130 bytes of JSON.
     */
    static void fill(DataSource dataSource, int transactions, int rowsPerTransaction) throws SQLException {
        try (Connection c = dataSource.getConnection(); Statement s = c.createStatement()) {
            c.setAutoCommit(true);
            for (int t = 0; t < transactions; t++) {
                s.execute("INSERT INTO public.bench_outbox (operation, item_code, description, price)"
                        + " SELECT 'U', 'ITEM-' || lpad(g::text, 9, '0'), 'Item ' || g || ' of the catalogue',"
                        + " (g % 10000) / 100.0 FROM generate_series(" + ((long) t * rowsPerTransaction + 1) + ", "
                        + ((long) (t + 1) * rowsPerTransaction) + ") g");
            }
            s.execute("VACUUM ANALYZE public.bench_outbox");
        }
    }

    static void truncate(DataSource dataSource) throws SQLException {
        execute(dataSource, "TRUNCATE public.bench_outbox");
    }

    static long count(DataSource dataSource) throws SQLException {
        try (Connection c = dataSource.getConnection(); Statement s = c.createStatement();
             ResultSet rs = s.executeQuery("SELECT count(*) FROM public.bench_outbox")) {
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
