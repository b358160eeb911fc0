package io.tidemark.benchmarks.capture;

import java.sql.PreparedStatement;
import java.sql.SQLException;
import java.util.concurrent.ThreadLocalRandom;

/**
 * The statements of the write-cost benchmark, each its own auto-committed transaction, with the fraction of the
 * plain table's throughput that issue 16 asks the captured table to keep.
 */
enum Workload {

    INSERT_ONE("single-row INSERT", 1, 0.8) {
        @Override
        String sql(BenchTable t) {
            return String.format(CaptureBench.INSERT_ONE, t.name());
        }

        @Override
        boolean bind(PreparedStatement s, BenchTable t) throws SQLException {
            CaptureBench.bindRow(s, t.nextInsertId.getAndIncrement());
            return true;
        }
    },
    UPDATE_ONE("single-row UPDATE", 1, 0.8) {
        @Override
        String sql(BenchTable t) {
            return "UPDATE " + t.name() + " SET qty = qty + 1, updated_at = now() WHERE id = ?";
        }

        @Override
        boolean bind(PreparedStatement s, BenchTable t) throws SQLException {
            s.setLong(1, ThreadLocalRandom.current().nextLong(1, BenchTable.UPDATE_ROWS + 1));
            return true;
        }
    },
    DELETE_ONE("single-row DELETE", 1, 0.8) {
        @Override
        String sql(BenchTable t) {
            return "DELETE FROM " + t.name() + " WHERE id = ?";
        }

        @Override
        boolean bind(PreparedStatement s, BenchTable t) throws SQLException {
            long id = t.nextDeleteKey();
            s.setLong(1, id);
            return id >= 0;
        }
    },
    INSERT_THOUSAND("INSERT of 1,000 rows", 1000, 0.6) {
        @Override
        String sql(BenchTable t) {
            return "INSERT INTO " + t.name() + " " + CaptureBench.GENERATED_ROWS;
        }

        @Override
        boolean bind(PreparedStatement s, BenchTable t) throws SQLException {
            long from = t.nextBulkId.getAndAdd(1000);
            s.setLong(1, from);
            s.setLong(2, from + 999);
            return true;
        }
    },
    UPDATE_THOUSAND("UPDATE of 1,000 rows", 1000, 0.6) {
        @Override
        String sql(BenchTable t) {
            return "UPDATE " + t.name() + " SET qty = qty + 1, updated_at = now() WHERE id BETWEEN ? AND ?";
        }

        @Override
        boolean bind(PreparedStatement s, BenchTable t) throws SQLException {
            // Consecutive ranges of the seeded keys, starting over at the first when all were updated.
            long from = t.bulkUpdateCursor.getAndIncrement() * 1000 % BenchTable.UPDATE_ROWS + 1;
            s.setLong(1, from);
            s.setLong(2, from + 999);
            return true;
        }
    };

    private final String label;
    private final int rows;
    private final double target;

    Workload(String label, int rows, double target) {
        this.label = label;
        this.rows = rows;
        this.target = target;
    }

    String label() {
        return label;
    }

    /** Rows each statement changes; a statement changing another number is an error in the benchmark. */
    int rows() {
        return rows;
    }

    /** The least fraction of the plain table's throughput issue 16 asks of the captured table. */
    double target() {
        return target;
    }

    abstract String sql(BenchTable t);

    /** Binds the next statement's parameters; false when the workload has no rows left to work on. */
    abstract boolean bind(PreparedStatement s, BenchTable t) throws SQLException;
}
