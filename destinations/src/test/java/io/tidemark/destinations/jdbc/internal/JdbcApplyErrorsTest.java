package io.tidemark.destinations.jdbc.internal;

import org.junit.jupiter.api.Test;

import java.net.ConnectException;
import java.sql.SQLException;

import static org.assertj.core.api.Assertions.assertThat;

/** Retryable versus fatal, for both databases, without a server: the states and numbers the drivers report. */
class JdbcApplyErrorsTest {

    @Test
    void postgres_states() {
        assertThat(ApplyErrors.isRetryable(new SQLException("serialize", "40001"))).isTrue();
        assertThat(ApplyErrors.isRetryable(new SQLException("deadlock", "40P01"))).isTrue();
        assertThat(ApplyErrors.isRetryable(new SQLException("lock", "55P03"))).isTrue();
        assertThat(ApplyErrors.isRetryable(new SQLException("cancelled by statement timeout", "57014"))).isTrue();
        assertThat(ApplyErrors.isRetryable(new SQLException("shutdown", "57P01"))).isTrue();
        assertThat(ApplyErrors.isRetryable(new SQLException("broken", "08006"))).isTrue();
        assertThat(ApplyErrors.isRetryable(new SQLException("x", null, new ConnectException("refused")))).isTrue();

        assertThat(ApplyErrors.isRetryable(new SQLException("no table", "42P01"))).isFalse();
        assertThat(ApplyErrors.isRetryable(new SQLException("no column", "42703"))).isFalse();
        assertThat(ApplyErrors.isRetryable(new SQLException("denied", "42501"))).isFalse();
        assertThat(ApplyErrors.isRetryable(new SQLException("not null", "23502"))).isFalse();
        assertThat(ApplyErrors.isRetryable(new SQLException("bad time", "22007"))).isFalse();
        assertThat(ApplyErrors.isRetryable(new SQLException("password", "28P01"))).isFalse();
    }

    @Test
    void sql_server_numbers() {
        assertThat(ApplyErrors.isRetryable(new SQLException("deadlock victim", "40001", 1205))).isTrue();
        assertThat(ApplyErrors.isRetryable(new SQLException("lock timeout", "S0001", 1222))).isTrue();
        assertThat(ApplyErrors.isRetryable(new SQLException("The query has timed out.", "HY008", 0))).isTrue();

        assertThat(ApplyErrors.isRetryable(new SQLException("Invalid object name", "S0002", 208))).isFalse();
        assertThat(ApplyErrors.isRetryable(new SQLException("Invalid column name", "S0001", 207))).isFalse();
        assertThat(ApplyErrors.isRetryable(new SQLException("permission denied", "S0005", 229))).isFalse();
        assertThat(ApplyErrors.isRetryable(new SQLException("Cannot insert NULL", "23000", 515))).isFalse();
        assertThat(ApplyErrors.isRetryable(new SQLException("truncated", "22001", 2628))).isFalse();
        assertThat(ApplyErrors.isRetryable(new SQLException("Login failed for user", "S0001", 18456))).isFalse();
    }

    @Test
    void anything_unknown_is_retryable() {
        assertThat(ApplyErrors.isRetryable(new SQLException("?", "XX000"))).isTrue();
        assertThat(ApplyErrors.isRetryable(new SQLException("?"))).isTrue();
    }
}
