package io.tidemark.postgres;

import io.tidemark.sync.ErrorCode;
import io.tidemark.sync.InitialSync;
import io.tidemark.sync.TidemarkException;
import io.tidemark.sync.TrackedObject;
import io.tidemark.sync.spi.CallContext;
import io.tidemark.sync.spi.ChangeRequest;
import io.tidemark.sync.spi.ResponsePayload;
import io.tidemark.testing.EmbeddedPostgresTest;
import io.tidemark.testing.TestDatabase;
import org.junit.jupiter.api.Test;

import javax.sql.DataSource;
import java.io.PrintWriter;
import java.lang.reflect.Proxy;
import java.sql.Connection;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.Duration;
import java.util.OptionalInt;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.logging.Logger;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

@EmbeddedPostgresTest
class PostgresProviderTest {

    private final TestDatabase database;
    private final PostgresProvider provider;

    PostgresProviderTest(TestDatabase database) {
        this.database = database;
        this.provider = PostgresProvider.create(database.dataSource());
        database.execute("CREATE TABLE IF NOT EXISTS victim (id int);"
                + "CREATE OR REPLACE FUNCTION public.echo_json(payload json) RETURNS json LANGUAGE sql AS"
                + " $$ SELECT json_build_object('Metadata', json_build_object('Sync', json_build_object('Version', 1)), 'Request', payload) $$;"
                + "CREATE OR REPLACE FUNCTION public.echo_jsonb(payload json) RETURNS jsonb LANGUAGE sql AS"
                + " $$ SELECT jsonb_build_object('Metadata', jsonb_build_object('Sync', jsonb_build_object('Version', 2)), 'Request', payload::jsonb) $$;"
                + "CREATE OR REPLACE FUNCTION public.echo_text(payload json) RETURNS text LANGUAGE sql AS"
                + " $$ SELECT '{\"Metadata\":{\"Sync\":{\"Version\":3}},\"Name\":\"Zoë ✓\"}' $$;"
                + "CREATE SCHEMA IF NOT EXISTS \"Sales Data\";"
                + "CREATE OR REPLACE FUNCTION \"Sales Data\".\"GetChanges\"(payload json) RETURNS json LANGUAGE sql AS"
                + " $$ SELECT '{\"Metadata\":{\"Sync\":{\"Version\":4}}}'::json $$;");
    }

    private static String text(ResponsePayload payload) {
        return payload.head(Integer.MAX_VALUE);
    }

    private ResponsePayload call(String procedure, ChangeRequest request) {
        TrackedObject object = TrackedObject.of("T", procedure);
        provider.validate(object);
        return provider.invoke(object, request, CallContext.none());
    }

    @Test
    void binds_the_request_as_a_json_parameter_and_returns_the_driver_bytes() {
        ResponsePayload payload = call("public.echo_json", ChangeRequest.sync(42, OptionalInt.of(7)));

        assertThat(payload.sizeUnit()).isEqualTo("bytes");
        assertThat(text(payload)).contains("\"Request\" : {\"fromVersion\":42,\"mode\":\"sync\",\"maxRows\":7}");
    }

    @Test
    void accepts_json_jsonb_and_text_results() {
        assertThat(text(call("echo_json", ChangeRequest.seed()))).contains("\"Version\" : 1");
        assertThat(text(call("ECHO_JSONB", ChangeRequest.seed()))).contains("\"Version\": 2").contains("\"mode\": \"seed\"");
        assertThat(text(call("public.echo_text", ChangeRequest.sync(0)))).isEqualTo("{\"Metadata\":{\"Sync\":{\"Version\":3}},\"Name\":\"Zoë ✓\"}");
    }

    @Test
    void quoted_names_keep_their_case_and_spaces() {
        assertThat(text(call("\"Sales Data\".\"GetChanges\"", ChangeRequest.sync(0)))).contains("\"Version\":4");
    }

    @Test
    void an_unsafe_name_is_refused_before_any_sql_runs() {
        AtomicInteger connections = new AtomicInteger();
        DataSource counting = counting(database.dataSource(), connections);
        PostgresProvider guarded = PostgresProvider.create(counting);
        for (String name : new String[] {"x; drop table victim", "public.victim()--", "a.b.c", "\"unclosed", "", "1abc"}) {
            TrackedObject object = TrackedObject.of("Bad", name.isEmpty() ? " x y" : name);
            assertThatThrownBy(() -> guarded.validate(object))
                    .isInstanceOf(TidemarkException.class)
                    .satisfies(e -> assertThat(((TidemarkException) e).code()).isEqualTo(ErrorCode.INVALID_IDENTIFIER))
                    .hasMessageContaining("[Bad]");
            assertThatThrownBy(() -> guarded.invoke(object, ChangeRequest.sync(0), CallContext.none()))
                    .isInstanceOf(TidemarkException.class);
        }
        assertThat(connections.get()).isZero();
        database.execute("SELECT count(*) FROM victim");
    }

    @Test
    void a_missing_function_says_what_to_create() {
        assertThatThrownBy(() -> call("public.no_such_changes", ChangeRequest.sync(0)))
                .isInstanceOf(TidemarkException.class)
                .satisfies(e -> assertThat(((TidemarkException) e).code()).isEqualTo(ErrorCode.PROCEDURE_NOT_FOUND))
                .hasMessageContaining("public.no_such_changes(json) does not exist")
                .hasMessageContaining("FUNCTION taking one json argument");
    }

    @Test
    void a_procedure_is_explained_as_the_wrong_kind_of_routine() {
        database.execute("CREATE OR REPLACE PROCEDURE public.a_procedure(payload json) LANGUAGE sql AS $$ SELECT 1 $$");
        assertThatThrownBy(() -> call("public.a_procedure", ChangeRequest.sync(0)))
                .isInstanceOf(TidemarkException.class)
                .satisfies(e -> assertThat(((TidemarkException) e).code()).isEqualTo(ErrorCode.PROCEDURE_SIGNATURE))
                .hasMessageContaining("PROCEDURE cannot return a value");
    }

    @Test
    void a_wrong_result_type_is_refused() {
        database.execute("CREATE OR REPLACE FUNCTION public.returns_int(payload json) RETURNS int LANGUAGE sql AS $$ SELECT 1 $$");
        assertThatThrownBy(() -> call("public.returns_int", ChangeRequest.sync(0)))
                .isInstanceOf(TidemarkException.class)
                .satisfies(e -> assertThat(((TidemarkException) e).code()).isEqualTo(ErrorCode.PROCEDURE_SIGNATURE))
                .hasMessageContaining("returns int4");
    }

    @Test
    void a_set_returning_function_is_refused() {
        database.execute("CREATE OR REPLACE FUNCTION public.returns_set(payload json) RETURNS SETOF json LANGUAGE sql AS"
                + " $$ SELECT '{}'::json UNION ALL SELECT '{}'::json $$");
        assertThatThrownBy(() -> call("public.returns_set", ChangeRequest.sync(0)))
                .isInstanceOf(TidemarkException.class)
                .hasMessageContaining("more than one row");
    }

    @Test
    void null_and_no_row_come_back_as_an_empty_payload() {
        database.execute("CREATE OR REPLACE FUNCTION public.returns_null(payload json) RETURNS json LANGUAGE sql AS $$ SELECT NULL::json $$;"
                + "CREATE OR REPLACE FUNCTION public.returns_nothing(payload json) RETURNS SETOF json LANGUAGE sql AS $$ SELECT '{}'::json WHERE false $$;");
        assertThat(call("public.returns_null", ChangeRequest.sync(0)).isBlank()).isTrue();
        assertThat(call("public.returns_nothing", ChangeRequest.sync(0)).isBlank()).isTrue();
    }

    @Test
    void permission_denied_names_the_grant_to_add() throws SQLException {
        database.execute("CREATE OR REPLACE FUNCTION public.guarded(payload json) RETURNS json LANGUAGE sql AS $$ SELECT '{}'::json $$;"
                + "REVOKE EXECUTE ON FUNCTION public.guarded(json) FROM PUBLIC;");
        DataSource app = database.createRole("provider_app");
        PostgresProvider appProvider = PostgresProvider.create(app);
        TrackedObject object = TrackedObject.of("Guarded", "public.guarded");

        assertThatThrownBy(() -> appProvider.invoke(object, ChangeRequest.sync(0), CallContext.none()))
                .isInstanceOf(TidemarkException.class)
                .satisfies(e -> assertThat(((TidemarkException) e).code()).isEqualTo(ErrorCode.PERMISSION_DENIED))
                .hasMessageContaining("[Guarded]")
                .hasMessageContaining("Grant EXECUTE");
    }

    @Test
    void a_call_longer_than_the_command_timeout_is_cancelled() {
        database.execute("CREATE OR REPLACE FUNCTION public.sleepy(payload json) RETURNS json LANGUAGE sql AS"
                + " $$ SELECT json_build_object('slept', pg_sleep(30)::text) $$");
        PostgresProvider impatient = PostgresProvider.builder(database.dataSource()).commandTimeout(Duration.ofSeconds(1)).build();
        TrackedObject object = TrackedObject.of("Sleepy", "public.sleepy");

        long started = System.nanoTime();
        assertThatThrownBy(() -> impatient.invoke(object, ChangeRequest.sync(0), CallContext.none()))
                .isInstanceOf(TidemarkException.class)
                .satisfies(e -> assertThat(((TidemarkException) e).code()).isEqualTo(ErrorCode.PROCEDURE_TIMEOUT))
                .hasMessageContaining("command timeout of 1 s");
        assertThat(Duration.ofNanos(System.nanoTime() - started)).isLessThan(Duration.ofSeconds(20));
    }

    @Test
    void the_default_command_timeout_is_300_seconds_and_must_be_positive() {
        assertThatThrownBy(() -> PostgresProvider.builder(database.dataSource()).commandTimeout(Duration.ofMillis(10))
                .build())
                .isInstanceOf(TidemarkException.class).hasMessageContaining("at least one second");
        assertThatThrownBy(() -> PostgresProvider.builder(database.dataSource())
                .commandTimeout(Duration.ofSeconds(Integer.MAX_VALUE + 1L)).build())
                .isInstanceOf(TidemarkException.class).hasMessageContaining("at most 2147483647 seconds");
        assertThat(PostgresProvider.create(database.dataSource())).extracting("timeoutSeconds").isEqualTo(300);
    }

    /** Setters only store: build() reports every bad value at once, nulls included. */
    @Test
    void every_problem_is_reported_by_build() {
        PostgresProvider.Builder builder = PostgresProvider.builder(null).commandTimeout(null).channel("c".repeat(64))
                .horizonWarningAfter(Duration.ofSeconds(-1)).horizonCheckInterval(null).clock(null);
        assertThatThrownBy(builder::build)
                .isInstanceOf(TidemarkException.class)
                .satisfies(e -> assertThat(((TidemarkException) e).code()).isEqualTo(ErrorCode.INVALID_CONFIGURATION))
                .hasMessageStartingWith("PostgresProvider has 6 configuration problems:")
                .hasMessageContaining("dataSource must not be null")
                .hasMessageContaining("commandTimeout must be at least one second")
                .hasMessageContaining("notification channel")
                .hasMessageContaining("horizonWarningAfter must be zero or positive, got PT-1S")
                .hasMessageContaining("horizonCheckInterval must be zero or positive, got null")
                .hasMessageContaining("clock must not be null");
        assertThatThrownBy(() -> PostgresProvider.builder(database.dataSource()).channel(null).build())
                .hasMessageContaining("channel must not be null");
    }

    @Test
    void a_command_timeout_beyond_what_jdbc_can_take_is_a_configuration_error_not_an_arithmetic_one() {
        // JDBC takes whole seconds as an int; this provider used to fail in build() with ArithmeticException.
        assertThatThrownBy(() -> PostgresProvider.builder(database.dataSource())
                .commandTimeout(Duration.ofSeconds(Integer.MAX_VALUE + 1L)).build())
                .isInstanceOf(TidemarkException.class).hasMessageContaining("at most 2147483647 seconds")
                .satisfies(e -> assertThat(((TidemarkException) e).code()).isEqualTo(ErrorCode.INVALID_CONFIGURATION));
    }

    @Test
    void a_connection_without_auto_commit_is_left_outside_any_transaction() throws SQLException {
        try (Connection shared = database.dataSource().getConnection()) {
            shared.setAutoCommit(false);
            int pid;
            try (Statement s = shared.createStatement(); ResultSet rs = s.executeQuery("SELECT pg_backend_pid()")) {
                rs.next();
                pid = rs.getInt(1);
            }
            shared.commit();
            PostgresProvider onShared = PostgresProvider.create(single(shared));

            onShared.invoke(TrackedObject.of("T", "public.echo_json"), ChangeRequest.sync(0), CallContext.none());

            assertThat(stateOf(pid)).isEqualTo("idle");
        }
    }

    @Test
    void incremental_objects_are_seeded_by_the_function_not_the_server() {
        assertThat(provider.currentVersion(TrackedObject.of("T", "public.echo_json").initialSync(InitialSync.INCREMENTAL)))
                .isEmpty();
    }

    private String stateOf(int pid) throws SQLException {
        try (Connection c = database.dataSource().getConnection(); Statement s = c.createStatement();
             ResultSet rs = s.executeQuery("SELECT state FROM pg_stat_activity WHERE pid = " + pid)) {
            rs.next();
            return rs.getString(1);
        }
    }

    /** A data source that always hands out the same connection, whose close() does nothing (like a pool). */
    private static DataSource single(Connection connection) {
        Connection unclosable = (Connection) Proxy.newProxyInstance(PostgresProviderTest.class.getClassLoader(),
                new Class<?>[] {Connection.class}, (proxy, method, args) -> method.getName().equals("close")
                        ? null : method.invoke(connection, args));
        return new DelegatingDataSource() {
            @Override
            public Connection getConnection() {
                return unclosable;
            }
        };
    }

    private static DataSource counting(DataSource target, AtomicInteger count) {
        return new DelegatingDataSource() {
            @Override
            public Connection getConnection() throws SQLException {
                count.incrementAndGet();
                return target.getConnection();
            }
        };
    }

    /** The parts of DataSource a test does not care about. */
    private abstract static class DelegatingDataSource implements DataSource {
        @Override
        public Connection getConnection(String username, String password) throws SQLException {
            return getConnection();
        }

        @Override
        public PrintWriter getLogWriter() {
            return null;
        }

        @Override
        public void setLogWriter(PrintWriter out) {
        }

        @Override
        public void setLoginTimeout(int seconds) {
        }

        @Override
        public int getLoginTimeout() {
            return 0;
        }

        @Override
        public Logger getParentLogger() {
            return Logger.getGlobal();
        }

        @Override
        public <T> T unwrap(Class<T> iface) throws SQLException {
            throw new SQLException("not a wrapper");
        }

        @Override
        public boolean isWrapperFor(Class<?> iface) {
            return false;
        }
    }
}
