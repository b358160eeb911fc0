package io.tidemark.testing.internal;

import io.tidemark.sync.internal.sql.PgName;
import io.tidemark.sync.internal.sql.SqlTemplate;
import io.tidemark.sync.spi.ResponsePayload;

import javax.sql.DataSource;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;

/** A change function, called the way the engine calls it: {@code SELECT fn(?::json)}, each call its own transaction. */
public final class FunctionTarget implements ContractTarget {

    private final DataSource dataSource;
    private final String function;
    private final String sql;
    private final int timeoutSeconds;
    private Connection connection;

    public FunctionTarget(DataSource dataSource, String function, int timeoutSeconds) {
        this.dataSource = dataSource;
        this.function = function;
        this.sql = SqlTemplate.of("SELECT {{function}}(?::json)::text")
                .with("function", PgName.parse(function, "function").quoted()).render();
        this.timeoutSeconds = timeoutSeconds;
    }

    @Override
    public String name() {
        return function;
    }

    @Override
    public ResponsePayload call(String json, boolean seed, long fromVersion, Integer maxRows) {
        String answer;
        try (PreparedStatement s = connection().prepareStatement(sql)) {
            s.setQueryTimeout(timeoutSeconds);
            s.setString(1, json);
            try (ResultSet rs = s.executeQuery()) {
                answer = rs.next() ? rs.getString(1) : null;
            }
        } catch (SQLException e) {
            throw new ContractClient.Violation("calling " + function + " with " + json + " failed: " + e.getMessage());
        }
        if (answer == null) {
            throw new ContractClient.Violation(function + " returned nothing (NULL or no row) for " + json);
        }
        return ResponsePayload.ofString(answer);
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
}
