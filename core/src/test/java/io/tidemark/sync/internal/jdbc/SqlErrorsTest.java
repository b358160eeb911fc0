package io.tidemark.sync.internal.jdbc;

import io.tidemark.sync.ErrorCode;
import io.tidemark.sync.TidemarkException;
import org.junit.jupiter.api.Test;

import java.net.ConnectException;
import java.net.SocketTimeoutException;
import java.net.UnknownHostException;
import java.sql.SQLException;

import static org.assertj.core.api.Assertions.assertThat;

/** The shared mapping of connection, login and privilege failures, on the exceptions the drivers throw. */
class SqlErrorsTest {

    private static final SqlContext CONTEXT = new SqlContext("Items", "calling public.items_changes",
            "jdbc:postgresql://db.example:5432/shop");

    @Test
    void sqlstate_class_08_is_a_connection_failure_that_names_the_target_and_what_to_check() {
        // pgjdbc: SQLState 08001 "Connection to localhost:5 refused. Check that the hostname and port are correct".
        SQLException refused = new SQLException("Connection to db.example:5432 refused. Check that the hostname and"
                + " port are correct and that the postmaster is accepting TCP/IP connections.", "08001",
                new ConnectException("Connection refused"));
        TidemarkException mapped = SqlErrors.connectionFailure(refused, CONTEXT);
        assertThat(mapped.code()).isEqualTo(ErrorCode.CONNECTION_FAILED);
        assertThat(mapped.objectName()).contains("Items");
        assertThat(mapped.getMessage())
                .startsWith("[Items] could not connect to jdbc:postgresql://db.example:5432/shop while calling"
                        + " public.items_changes: Connection to db.example:5432 refused.")
                .contains("(SQLState 08001)")
                .endsWith("Check the JDBC URL, the credentials and the network (is the server running, and reachable"
                        + " from this host on that port?).");
        assertThat(mapped.getCause()).isSameAs(refused);
    }

    @Test
    void a_socket_failure_among_the_causes_is_a_connection_failure_whatever_the_sqlstate() {
        for (Exception socket : new Exception[] {new ConnectException("Connection refused"),
                new SocketTimeoutException("connect timed out"), new UnknownHostException("db.invalid")}) {
            SQLException wrapped = new SQLException("I/O error", "XX000", new RuntimeException(socket));
            assertThat(SqlErrors.isConnectionFailure(wrapped)).as(socket.toString()).isTrue();
            assertThat(SqlErrors.map(wrapped, CONTEXT, "Grant it.", ErrorCode.DATABASE_ERROR).code())
                    .isEqualTo(ErrorCode.CONNECTION_FAILED);
        }
    }

    @Test
    void pgjdbc_connection_attempt_failed_is_a_connection_failure() {
        assertThat(SqlErrors.isConnectionFailure(new SQLException("The connection attempt failed.", (String) null)))
                .isTrue();
    }

    @Test
    void a_pool_that_had_no_connection_to_give_is_a_connection_failure_even_without_a_state() {
        SQLException poolTimeout = new java.sql.SQLTransientConnectionException(
                "tidemark - Connection is not available, request timed out after 2001ms.", (String) null);
        assertThat(SqlErrors.isConnectionFailure(poolTimeout)).isTrue();
        assertThat(SqlErrors.map(poolTimeout, CONTEXT, "Grant it.", ErrorCode.DATABASE_ERROR).code())
                .isEqualTo(ErrorCode.CONNECTION_FAILED);
    }

    @Test
    void a_chained_sql_server_style_error_is_searched_too() {
        SQLException first = new SQLException("follow-up", "S0001", 3998);
        first.setNextException(new SQLException("Connection reset", "08S01"));
        assertThat(SqlErrors.isConnectionFailure(first)).isTrue();
    }

    @Test
    void authentication_failures_are_connection_failures_that_say_credentials() {
        for (String state : new String[] {"28P01", "28000"}) {
            SQLException denied = new SQLException("FATAL: password authentication failed for user \"app\"", state);
            TidemarkException mapped = SqlErrors.connectionFailure(denied, CONTEXT);
            assertThat(mapped.code()).as(state).isEqualTo(ErrorCode.CONNECTION_FAILED);
            assertThat(mapped.getMessage()).as(state)
                    .contains("could not log in to jdbc:postgresql://db.example:5432/shop while calling")
                    .contains("Check the credentials (user name and password)");
        }
    }

    @Test
    void sql_server_login_failed_is_an_authentication_failure_though_its_sqlstate_is_not_class_28() {
        // mssql-jdbc: "Login failed for user 'app'.", error 18456, SQLState S0001 (as a JDBC store on SQL Server
        // sees it, without the SQL Server provider's mapper).
        SQLException loginFailed = new SQLException("Login failed for user 'app'.", "S0001", 18456);
        TidemarkException mapped = SqlErrors.connectionFailure(loginFailed, CONTEXT);
        assertThat(mapped.code()).isEqualTo(ErrorCode.CONNECTION_FAILED);
        assertThat(mapped.getMessage()).contains("could not log in to").contains("Check the credentials");
        assertThat(SqlErrors.isAuthenticationFailure(new SQLException("no such table", "S0002", 208))).isFalse();
    }

    @Test
    void the_host_and_port_the_driver_reported_are_added_when_the_target_has_no_url() {
        SqlContext noUrl = new SqlContext(null, "installing the outbox", "the data source com.example.Pool");
        TidemarkException mapped = SqlErrors.connectionFailed(new SQLException("The TCP/IP connection to the host"
                + " sql.example, port 1433 has failed.", "08S01"), noUrl);
        assertThat(mapped.objectName()).isEmpty();
        assertThat(mapped.getMessage()).startsWith("Could not connect to the data source com.example.Pool"
                + " (sql.example:1433) while installing the outbox");
    }

    @Test
    void other_failures_are_left_to_the_caller_or_mapped_by_the_shared_rules() {
        SQLException undefined = new SQLException("function x(json) does not exist", "42883");
        assertThat(SqlErrors.connectionFailure(undefined, CONTEXT)).isNull();

        TidemarkException denied = SqlErrors.map(new SQLException("permission denied for table t", "42501"),
                CONTEXT, "Grant SELECT on it.", ErrorCode.DATABASE_ERROR);
        assertThat(denied.code()).isEqualTo(ErrorCode.PERMISSION_DENIED);
        assertThat(denied.getMessage()).isEqualTo("[Items] calling public.items_changes failed: permission denied"
                + " for table t (SQLState 42501). Grant SELECT on it.");

        TidemarkException other = SqlErrors.map(undefined, CONTEXT, "Grant it.", ErrorCode.DATABASE_ERROR);
        assertThat(other.code()).isEqualTo(ErrorCode.DATABASE_ERROR);
        assertThat(other.getMessage()).isEqualTo("[Items] calling public.items_changes failed: function x(json)"
                + " does not exist (SQLState 42883)");
    }
}
