package io.tidemark.benchmarks.capture;

import javax.sql.DataSource;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.SQLException;
import java.util.LinkedHashMap;
import java.util.Map;

/**
 * WAL written per changed row, from {@code pg_current_wal_insert_lsn()} before and after a fixed workload on one
 * connection with nothing else writing (autovacuum is off on the benchmark's tables). The position is
 * cluster-wide, so a background process writing at the same moment would be counted: the benchmark takes the
 * median over its rounds.
 */
final class WalMeter {

    /** The workloads measured, in the order they run; each changes {@code statements x rows} rows. */
    static final String[] WORKLOADS = {"INSERT of 1,000 rows", "UPDATE of 1,000 rows", "DELETE of 1,000 rows",
            "single-row INSERT", "single-row UPDATE"};

    /** Single-row transactions per single-row workload. */
    static final int SINGLE_ROW_TRANSACTIONS = 1000;

    private WalMeter() {
    }

    /** Bytes of WAL per changed row, by workload: 1,000-row statements, then single-row transactions. */
    static Map<String, Double> measure(DataSource writers, BenchTable table, int statements) throws SQLException {
        Map<String, Double> perRow = new LinkedHashMap<>();
        try (Connection c = writers.getConnection()) {
            long first = table.nextWalId.getAndAdd(statements * 1000L);
            String name = table.name();
            perRow.put(WORKLOADS[0], ranges(c, "INSERT INTO " + name + " " + CaptureBench.GENERATED_ROWS, first,
                    statements));
            perRow.put(WORKLOADS[1], ranges(c, "UPDATE " + name + " SET qty = qty + 1, updated_at = now()"
                    + " WHERE id BETWEEN ? AND ?", first, statements));
            perRow.put(WORKLOADS[2], ranges(c, "DELETE FROM " + name + " WHERE id BETWEEN ? AND ?", first,
                    statements));

            long single = table.nextWalId.getAndAdd(SINGLE_ROW_TRANSACTIONS);
            try (PreparedStatement s = c.prepareStatement(String.format(CaptureBench.INSERT_ONE, name))) {
                long before = lsn(c);
                for (int i = 0; i < SINGLE_ROW_TRANSACTIONS; i++) {
                    CaptureBench.bindRow(s, single + i);
                    s.executeUpdate();
                }
                perRow.put(WORKLOADS[3], (double) (lsn(c) - before) / SINGLE_ROW_TRANSACTIONS);
            }
            try (PreparedStatement s = c.prepareStatement("UPDATE " + name
                    + " SET qty = qty + 1, updated_at = now() WHERE id = ?")) {
                long before = lsn(c);
                for (int i = 0; i < SINGLE_ROW_TRANSACTIONS; i++) {
                    s.setLong(1, single + i);
                    s.executeUpdate();
                }
                perRow.put(WORKLOADS[4], (double) (lsn(c) - before) / SINGLE_ROW_TRANSACTIONS);
            }
        }
        return perRow;
    }

    private static double ranges(Connection c, String sql, long first, int statements) throws SQLException {
        try (PreparedStatement s = c.prepareStatement(sql)) {
            long before = lsn(c);
            for (int i = 0; i < statements; i++) {
                long from = first + i * 1000L;
                s.setLong(1, from);
                s.setLong(2, from + 999);
                int rows = s.executeUpdate();
                if (rows != 1000) {
                    throw new IllegalStateException(sql + " changed " + rows + " rows, not 1000");
                }
            }
            return (double) (lsn(c) - before) / (statements * 1000L);
        }
    }

    /** The WAL insert position, as a byte offset ("16/B374D848" is 0x16 << 32 | 0xB374D848). */
    private static long lsn(Connection c) throws SQLException {
        String text = CaptureBench.text(c, "SELECT pg_current_wal_insert_lsn()::text");
        int slash = text.indexOf('/');
        return (Long.parseLong(text.substring(0, slash), 16) << 32) | Long.parseLong(text.substring(slash + 1), 16);
    }
}
