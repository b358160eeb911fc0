package io.tidemark.postgres.internal.outbox;

import javax.sql.DataSource;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;

/**
 * Calls the generated trim function until it deletes nothing more, each call in its own transaction: a trim never
 * holds locks, WAL or the transaction horizon for longer than one batch.
 */
public final class OutboxTrimmer {

    /** What the calls did. */
    public record Outcome(long deleted, int batches) {
    }

    private OutboxTrimmer() {
    }

    public static Outcome trim(DataSource dataSource, OutboxNames names, long throughVersion, int batchSize) {
        String sql = "SELECT " + names.trimFunction().quoted() + "(?, ?)";
        long deleted = 0;
        int batches = 0;
        try (Connection connection = dataSource.getConnection()) {
            boolean autoCommit = connection.getAutoCommit();
            connection.setAutoCommit(true);
            try (PreparedStatement s = connection.prepareStatement(sql)) {
                s.setLong(1, throughVersion);
                s.setInt(2, batchSize);
                long batch;
                do {
                    try (ResultSet rs = s.executeQuery()) {
                        rs.next();
                        batch = rs.getLong(1);
                    }
                    batches++;
                    deleted += batch;
                } while (batch > 0);
            } finally {
                connection.setAutoCommit(autoCommit);
            }
        } catch (SQLException e) {
            throw OutboxInstaller.failure(dataSource, "trim " + names.outbox(), e);
        }
        return new Outcome(deleted, batches);
    }
}
