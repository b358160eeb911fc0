package io.tidemark.postgres;

import io.tidemark.sync.TrackedObject;
import io.tidemark.sync.TidemarkException;
import io.tidemark.sync.SyncEngine;
import io.tidemark.sync.Outcome;
import io.tidemark.sync.JdbcWatermarkStore;
import io.tidemark.sync.JdbcDeadLetterStore;
import io.tidemark.sync.InMemoryWatermarkStore;
import io.tidemark.sync.ErrorCode;
import io.tidemark.sync.CheckReport;
import io.tidemark.testing.EmbeddedPostgresTest;
import io.tidemark.testing.RecordingDestination;
import io.tidemark.testing.TestDatabase;
import org.junit.jupiter.api.Test;
import org.postgresql.ds.PGSimpleDataSource;

import java.io.IOException;
import java.net.ServerSocket;
import java.time.Duration;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.assertj.core.api.Assertions.tuple;

/** The engine's start-up check: every problem in one report, before any cycle runs. */
@EmbeddedPostgresTest
class StartupCheckTest {

    private final TestDatabase database;

    StartupCheckTest(TestDatabase database) {
        this.database = database;
        database.execute("""
                CREATE OR REPLACE FUNCTION public.good_changes(request json) RETURNS json LANGUAGE sql
                    AS $$ SELECT '{"Metadata":{"Sync":{"Version":0}},"Data":[]}'::json $$;
                CREATE OR REPLACE FUNCTION public.jsonb_changes(request jsonb) RETURNS json LANGUAGE sql
                    AS $$ SELECT '{}'::json $$;
                CREATE OR REPLACE FUNCTION public.set_changes(request json) RETURNS SETOF json LANGUAGE sql
                    AS $$ SELECT '{}'::json $$;
                CREATE OR REPLACE FUNCTION public.int_changes(request json) RETURNS integer LANGUAGE sql AS $$ SELECT 1 $$;
                CREATE OR REPLACE PROCEDURE public.proc_changes(request json) LANGUAGE sql AS $$ SELECT 1 $$;
                CREATE OR REPLACE FUNCTION public.defaulted_changes(request json, extra int DEFAULT 0) RETURNS text
                    LANGUAGE sql AS $$ SELECT '{}' $$;
                CREATE SCHEMA IF NOT EXISTS hidden;
                CREATE OR REPLACE FUNCTION hidden.secret_changes(request json) RETURNS json LANGUAGE sql
                    AS $$ SELECT '{}'::json $$;
                REVOKE EXECUTE ON FUNCTION hidden.secret_changes(json) FROM PUBLIC;
                """);
    }

    private static int closedPort() throws IOException {
        try (ServerSocket socket = new ServerSocket(0)) {
            return socket.getLocalPort();
        }
    }

    /** A data source for the test database that can be pointed at a port where nothing listens. */
    private PGSimpleDataSource movable() {
        PGSimpleDataSource ds = new PGSimpleDataSource();
        ds.setURL(database.jdbcUrl());
        ds.setConnectTimeout(5);
        return ds;
    }

    private SyncEngine.Builder engine(TrackedObject... objects) {
        SyncEngine.Builder builder = SyncEngine.builder()
                .provider(PostgresProvider.builder(database.dataSource()).listen(false).build())
                .destination("out", new RecordingDestination())
                .pollInterval(Duration.ofHours(1));
        for (TrackedObject object : objects) {
            builder.track(object);
        }
        return builder;
    }

    @Test
    void a_closed_store_port_a_missing_function_and_a_wrong_signature_are_one_report() throws IOException {
        PGSimpleDataSource storeSource = movable();
        JdbcWatermarkStore store = JdbcWatermarkStore.create(storeSource);
        storeSource.setPortNumbers(new int[] {closedPort()});

        SyncEngine engine = engine(TrackedObject.of("Good", "public.good_changes"),
                TrackedObject.of("Missing", "public.no_such_changes"),
                TrackedObject.of("Jsonb", "public.jsonb_changes"))
                .watermarks(store).build();
        CheckReport report = engine.check();

        assertThat(report.isOk()).isFalse();
        assertThat(report.problems()).extracting(CheckReport.Problem::subject, CheckReport.Problem::code)
                .containsExactly(
                        tuple("Missing", ErrorCode.PROCEDURE_NOT_FOUND),
                        tuple("Jsonb", ErrorCode.PROCEDURE_SIGNATURE),
                        tuple("watermark store", ErrorCode.CONNECTION_FAILED));
        assertThat(report.problems().get(0).message()).contains("public.no_such_changes does not exist");
        assertThat(report.problems().get(1).message()).contains("public.jsonb_changes(jsonb)")
                .contains("takes one json argument");
        assertThat(report.problems().get(2).message()).contains("could not connect")
                .contains("URL, the credentials and the network");
    }

    @Test
    void check_on_build_throws_one_error_listing_every_problem() throws IOException {
        PGSimpleDataSource storeSource = movable();
        JdbcWatermarkStore store = JdbcWatermarkStore.create(storeSource);
        storeSource.setPortNumbers(new int[] {closedPort()});

        assertThatThrownBy(() -> engine(TrackedObject.of("Missing", "public.no_such_changes"),
                TrackedObject.of("Set", "public.set_changes"))
                .watermarks(store).checkOnBuild(true).build())
                .isInstanceOf(TidemarkException.class)
                .satisfies(e -> assertThat(((TidemarkException) e).code()).isEqualTo(ErrorCode.CHECK_FAILED))
                .hasMessageContaining("found 3 problems")
                .hasMessageContaining("[Missing] PROCEDURE_NOT_FOUND")
                .hasMessageContaining("[Set] PROCEDURE_SIGNATURE: public.set_changes(json) returns SETOF json")
                .hasMessageContaining("[watermark store] CONNECTION_FAILED");
    }

    @Test
    void a_provider_that_cannot_connect_is_one_problem_not_one_per_object() throws IOException {
        PGSimpleDataSource providerSource = movable();
        providerSource.setPortNumbers(new int[] {closedPort()});
        SyncEngine engine = SyncEngine.builder()
                .provider(PostgresProvider.builder(providerSource).listen(false).build())
                .watermarks(InMemoryWatermarkStore.create())
                .track(TrackedObject.of("A", "public.good_changes"))
                .track(TrackedObject.of("B", "public.good_changes"))
                .destination("out", new RecordingDestination())
                .build();

        assertThat(engine.check().problems()).extracting(CheckReport.Problem::subject, CheckReport.Problem::code)
                .containsExactly(tuple("provider postgres", ErrorCode.CONNECTION_FAILED));
    }

    @Test
    void every_shape_the_call_cannot_use_is_named() {
        CheckReport report = engine(TrackedObject.of("Int", "public.int_changes"),
                TrackedObject.of("Proc", "public.proc_changes"),
                TrackedObject.of("Unqualified", "secret_changes"),
                TrackedObject.of("Defaulted", "public.defaulted_changes"),
                TrackedObject.of("Good", "good_changes"))
                .watermarks(JdbcWatermarkStore.create(database.dataSource())).build().check();

        assertThat(report.problems()).extracting(CheckReport.Problem::subject, CheckReport.Problem::code)
                .containsExactly(
                        tuple("Int", ErrorCode.PROCEDURE_SIGNATURE),
                        tuple("Proc", ErrorCode.PROCEDURE_SIGNATURE),
                        tuple("Unqualified", ErrorCode.PROCEDURE_NOT_FOUND));
        assertThat(report.problems().get(0).message()).contains("returns integer");
        assertThat(report.problems().get(1).message()).contains("a PROCEDURE");
        assertThat(report.problems().get(2).message()).contains("in the role's search_path");
    }

    @Test
    void a_function_the_role_may_not_execute_is_reported() {
        java.util.List<CheckReport.Problem> problems = PostgresProvider.builder(database.createRole("check_app"))
                .listen(false).build().check(java.util.List.of(TrackedObject.of("Secret", "hidden.secret_changes")));

        assertThat(problems).extracting(CheckReport.Problem::code).containsExactly(ErrorCode.PERMISSION_DENIED);
        assertThat(problems.get(0).message()).contains("GRANT EXECUTE ON FUNCTION hidden.secret_changes(json)");
    }

    @Test
    void a_sound_engine_passes_the_check_and_builds() {
        SyncEngine engine = engine(TrackedObject.of("Good", "public.good_changes"))
                .watermarks(JdbcWatermarkStore.create(database.dataSource()))
                .deadLetters(JdbcDeadLetterStore.create(database.dataSource()))
                .checkOnBuild(true).build();
        assertThat(engine.check().isOk()).as(engine.check().toString()).isTrue();
        assertThat(engine.runOnce("Good").outcome()).isEqualTo(Outcome.NO_CHANGES);
    }
}
