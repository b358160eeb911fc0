package io.tidemark.testing.internal;

import io.tidemark.sync.Change;
import io.tidemark.sync.Operation;
import io.tidemark.sync.TidemarkException;
import io.tidemark.sync.internal.contract.ChangeReader;
import io.tidemark.sync.internal.contract.ResponseScanner;
import io.tidemark.sync.internal.contract.ResponseSummary;
import io.tidemark.sync.spi.ResponsePayload;
import io.tidemark.sync.internal.sql.PgName;

import javax.sql.DataSource;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.util.List;

/**
 * Calls a change function the way the engine does ({@code SELECT fn(?::json)} in a transaction of its own) and
 * reads the answer with the engine's own checking pass, so the verifier judges responses exactly as Tidemark
 * would. A response the engine would refuse is a {@link Violation}.
 */
public final class ContractClient implements AutoCloseable {

    private final DataSource dataSource;
    private final String function;
    private final String sql;
    private final int timeoutSeconds;
    private Connection connection;

    public ContractClient(DataSource dataSource, String function, int timeoutSeconds) {
        this.dataSource = dataSource;
        this.function = function;
        this.sql = "SELECT " + PgName.parse(function, "function").quoted() + "(?::json)::text";
        this.timeoutSeconds = timeoutSeconds;
    }

    /** What one call returned, checked. */
    public record Answer(String request, ResponseSummary summary, List<Change> rows) {

        /** The version the engine stores after this answer: the highest $version, else Metadata.Sync.Version. */
        public long versionToStore() {
            return summary.versionToStore();
        }

        /** A one-line account of the answer for the transcript. */
        public String brief() {
            StringBuilder s = new StringBuilder(request).append(" -> Version ").append(summary.metadataVersion())
                    .append(", ").append(summary.syncType()).append(", ").append(rows.size()).append(" rows");
            if (!rows.isEmpty()) {
                s.append(": ");
                for (int i = 0; i < rows.size() && i < 12; i++) {
                    Change c = rows.get(i);
                    s.append(i == 0 ? "" : ", ").append(c.operation().map(Operation::code).orElse("?"))
                            .append('@').append(c.version().isPresent() ? Long.toString(c.version().getAsLong()) : "-");
                }
                if (rows.size() > 12) {
                    s.append(", ...");
                }
            }
            return s.toString();
        }
    }

    public Answer seed() {
        return call("{\"fromVersion\":0,\"mode\":\"seed\"}");
    }

    public Answer sync(long fromVersion, Integer maxRows) {
        return call("{\"fromVersion\":" + fromVersion + ",\"mode\":\"sync\""
                + (maxRows == null ? "" : ",\"maxRows\":" + maxRows) + "}");
    }

    private Answer call(String request) {
        String json;
        try (PreparedStatement s = connection().prepareStatement(sql)) {
            s.setQueryTimeout(timeoutSeconds);
            s.setString(1, request);
            try (ResultSet rs = s.executeQuery()) {
                json = rs.next() ? rs.getString(1) : null;
            }
        } catch (SQLException e) {
            throw new Violation("calling " + function + " with " + request + " failed: " + e.getMessage());
        }
        if (json == null) {
            throw new Violation(function + " returned nothing (NULL or no row) for " + request);
        }
        // Checked and read by the engine's own passes, so the rows are exactly what a destination would get.
        try (ResponsePayload payload = ResponsePayload.ofString(json)) {
            ResponseSummary summary = ResponseScanner.scan(function, payload);
            if (summary.rowCount() == 0) {
                return new Answer(request, summary, List.of());
            }
            try (ChangeReader reader = new ChangeReader(function, payload)) {
                return new Answer(request, summary, reader.nextPage(Math.toIntExact(summary.rowCount())));
            }
        } catch (TidemarkException e) {
            throw new Violation("the engine would refuse the answer to " + request + ": " + e.getMessage());
        }
    }

    /**
     * One connection for every call, in auto-commit: each call is its own transaction, as the engine's are, and no
     * transaction stays open between calls to hold the horizon back.
     */
    private Connection connection() throws SQLException {
        if (connection == null || connection.isClosed()) {
            connection = dataSource.getConnection();
            connection.setAutoCommit(true);
        }
        return connection;
    }

    @Override
    public void close() {
        if (connection != null) {
            try {
                connection.close();
            } catch (SQLException ignored) {
                // closing anyway
            }
            connection = null;
        }
    }

    /** The function broke the contract; the message says how. */
    public static final class Violation extends RuntimeException {
        private static final long serialVersionUID = 1L;

        public Violation(String message) {
            super(message);
        }
    }
}
