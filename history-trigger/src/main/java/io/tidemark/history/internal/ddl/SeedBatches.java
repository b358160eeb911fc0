package io.tidemark.history.internal.ddl;

import io.tidemark.history.InstallProgress;

import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;

/**
 * The install's seed in primary-key order, one batch of rows per statement, each batch reported: the same rows
 * and values as the single {@code INSERT ... SELECT} of the script, since it runs in the install's transaction
 * under its lock (no row can appear, change or go between batches) and {@code now()} is the transaction's time.
 * Each batch starts after the last key of the previous one (a range scan of the primary key), so the work is
 * linear in the table's size.
 */
final class SeedBatches {

    private final HistorySql sql;
    private final InstallProgress progress;
    private final int batchRows;

    SeedBatches(HistorySql sql, InstallProgress progress, int batchRows) {
        this.sql = sql;
        this.progress = progress;
        this.batchRows = batchRows;
    }

    /** Seeds every row; returns how many. */
    long run(Connection c) throws SQLException {
        long total;
        try (Statement s = c.createStatement(); ResultSet rs = s.executeQuery(sql.countRows())) {
            rs.next();
            total = rs.getLong(1);
        }
        progress.seeded(0, total);
        long done = 0;
        String[] lastKey = null;
        String first = sql.seedBatch(true, batchRows);
        String next = sql.seedBatch(false, batchRows);
        while (true) {
            try (PreparedStatement s = c.prepareStatement(lastKey == null ? first : next)) {
                for (int i = 0; lastKey != null && i < lastKey.length; i++) {
                    s.setString(i + 1, lastKey[i]);
                }
                try (ResultSet rs = s.executeQuery()) {
                    if (!rs.next()) {
                        break;
                    }
                    long rows = rs.getLong(1);
                    lastKey = new String[rs.getMetaData().getColumnCount() - 1];
                    for (int i = 0; i < lastKey.length; i++) {
                        lastKey[i] = rs.getString(i + 2);
                    }
                    done += rows;
                    progress.seeded(done, total);
                    if (rows < batchRows) {
                        break;
                    }
                }
            }
        }
        return done;
    }
}
