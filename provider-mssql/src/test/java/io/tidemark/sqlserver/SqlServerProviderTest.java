package io.tidemark.sqlserver;

import io.tidemark.sqlserver.internal.ProcedureCheck;
import io.tidemark.sync.CheckReport;
import io.tidemark.sync.Diagnostic;
import io.tidemark.sync.ErrorCode;
import io.tidemark.sync.InMemoryWatermarkStore;
import io.tidemark.sync.InitialSync;
import io.tidemark.sync.SyncEngine;
import io.tidemark.sync.TidemarkException;
import io.tidemark.sync.TrackedObject;
import io.tidemark.sync.spi.CallContext;
import io.tidemark.sync.spi.ChangeRequest;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

import java.time.Duration;
import java.util.List;
import java.util.OptionalLong;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/** What the provider decides without a database; the calls themselves run in the container tests. */
class SqlServerProviderTest {

    private final NoDatabase database = new NoDatabase();
    private final SqlServerProvider provider = SqlServerProvider.create(database);

    @Test
    void calls_the_procedure_by_its_bracketed_name_with_one_bound_parameter() {
        assertThat(provider.callSql(TrackedObject.of("Items", "dbo.get_item_changes")))
                .isEqualTo("SET NOCOUNT ON; EXEC [dbo].[get_item_changes] @Json = ?");
        assertThat(provider.callSql(TrackedObject.of("Odd", "[sales data].[get]]it]")))
                .isEqualTo("SET NOCOUNT ON; EXEC [sales data].[get]]it] @Json = ?");
        assertThat(provider.callSql(TrackedObject.of("Plain", "get_changes")))
                .isEqualTo("SET NOCOUNT ON; EXEC [get_changes] @Json = ?");
        assertThat(provider.name()).isEqualTo("sqlserver");
    }

    @Test
    void the_source_identity_is_the_bracketed_procedure_whatever_its_spelling() {
        assertThat(provider.sourceIdentity(TrackedObject.of("Items", "dbo.GetItemChanges")))
                .isEqualTo("sqlserver:[dbo].[GetItemChanges]")
                .isEqualTo(provider.sourceIdentity(TrackedObject.of("Items", "[dbo].[GetItemChanges]")));
        assertThat(provider.sourceIdentity(TrackedObject.of("Items", "dbo.GetOrderChanges")))
                .isNotEqualTo(provider.sourceIdentity(TrackedObject.of("Items", "dbo.GetItemChanges")));
        assertThat(database.attempts()).isZero();
    }

    @Test
    void the_start_up_check_reports_an_unreachable_database_once_for_all_objects() {
        List<CheckReport.Problem> problems = provider.check(List.of(TrackedObject.of("A", "dbo.a"),
                TrackedObject.of("B", "dbo.b")));

        assertThat(problems).singleElement().satisfies(p -> {
            assertThat(p.subject()).isEqualTo("provider sqlserver");
            assertThat(p.code()).isEqualTo(ErrorCode.CONNECTION_FAILED);
            assertThat(p.message()).contains("no database in this test")
                    .contains("Check the data source's URL, the credentials and the network.");
        });
        assertThat(database.attempts()).isEqualTo(1);
    }

    @Test
    void the_start_up_check_binds_the_procedure_name_and_reads_only_the_catalog() {
        assertThat(ProcedureCheck.PROCEDURE)
                .contains("WHERE o.object_id = OBJECT_ID(?)")
                .contains("LEFT JOIN sys.parameters AS p ON p.object_id = o.object_id AND p.name = N'@Json'")
                .doesNotContainIgnoringCase("EXEC")
                .doesNotContain("[");
    }

    @Test
    void the_engine_check_lists_the_provider_problem_with_the_stores() {
        SyncEngine engine = SyncEngine.builder().provider(provider).watermarks(InMemoryWatermarkStore.create())
                .track(TrackedObject.of("Items", "dbo.items_changes")).destination("test", batch -> { }).build();
        assertThatThrownBy(() -> engine.check().throwIfProblems("test"))
                .satisfies(e -> assertThat(((TidemarkException) e).code()).isEqualTo(ErrorCode.CHECK_FAILED))
                .hasMessageContaining("[provider sqlserver] CONNECTION_FAILED");
    }

    @ParameterizedTest
    @ValueSource(strings = {"dbo.p; DROP TABLE x", "dbo.p --", "a.b.c", "[dbo].[p", "exec p", "dbo.p(1)"})
    void refuses_an_unsafe_procedure_name_before_any_sql(String procedure) {
        TrackedObject object = TrackedObject.of("Items", procedure);
        assertThatThrownBy(() -> provider.validate(object))
                .isInstanceOf(TidemarkException.class)
                .satisfies(e -> assertThat(((TidemarkException) e).code()).isEqualTo(ErrorCode.INVALID_IDENTIFIER))
                .hasMessageStartingWith("[Items] Refusing the procedure name");
        assertThatThrownBy(() -> provider.invoke(object, ChangeRequest.sync(1), CallContext.none()))
                .isInstanceOf(TidemarkException.class);
        assertThat(database.attempts()).isZero();
    }

    @Test
    void refuses_an_unsafe_table_name_before_any_sql() {
        TrackedObject object = TrackedObject.of("Items", "dbo.p").table("dbo.Items'--");
        assertThatThrownBy(() -> provider.validate(object))
                .satisfies(e -> assertThat(((TidemarkException) e).code()).isEqualTo(ErrorCode.INVALID_IDENTIFIER))
                .hasMessageContaining("Refusing the table name");
        assertThat(database.attempts()).isZero();
    }

    @Test
    void the_engine_refuses_an_unsafe_name_at_build_without_connecting() {
        assertThatThrownBy(() -> SyncEngine.builder()
                .provider(provider)
                .watermarks(InMemoryWatermarkStore.create())
                .track(TrackedObject.of("Items", "dbo.items;shutdown"))
                .destination("test", batch -> { })
                .build())
                .isInstanceOf(TidemarkException.class)
                .satisfies(e -> assertThat(((TidemarkException) e).code()).isEqualTo(ErrorCode.INVALID_CONFIGURATION))
                .hasMessageContaining("[Items] Refusing the procedure name");
        assertThat(database.attempts()).isZero();
    }

    @Test
    void a_renamed_procedure_under_the_same_object_name_is_checked_again() {
        provider.validate(TrackedObject.of("Items", "dbo.good"));
        TrackedObject changed = TrackedObject.of("Items", "dbo.bad name");
        assertThatThrownBy(() -> provider.validate(changed)).isInstanceOf(TidemarkException.class);
        assertThat(provider.callSql(TrackedObject.of("Items", "dbo.other")))
                .isEqualTo("SET NOCOUNT ON; EXEC [dbo].[other] @Json = ?");
    }

    @Test
    void a_connection_failure_is_reported_for_the_object() {
        TrackedObject object = TrackedObject.of("Items", "dbo.p");
        assertThatThrownBy(() -> provider.invoke(object, ChangeRequest.sync(3), CallContext.none()))
                .isInstanceOf(TidemarkException.class)
                .satisfies(e -> assertThat(((TidemarkException) e).code()).isEqualTo(ErrorCode.CONNECTION_FAILED))
                .hasMessageContaining("[Items] could not connect to the data source " + NoDatabase.class.getName()
                        + " while calling dbo.p: no database in this test (SQLState 08001)")
                .hasMessageContaining("Check the JDBC URL, the credentials and the network");
        assertThatThrownBy(() -> provider.currentVersion(object.initialSync(InitialSync.INCREMENTAL)))
                .satisfies(e -> assertThat(((TidemarkException) e).code())
                        .isEqualTo(ErrorCode.CONNECTION_FAILED))
                .hasMessageContaining("while reading the starting watermark");
    }

    @Test
    void defaults_follow_the_procedure_contract() {
        assertThat(provider.commandTimeout()).isEqualTo(Duration.ofSeconds(300));
        assertThat(provider.watermarkQuery(TrackedObject.of("Items", "p"))).isEqualTo(WatermarkQuery.changeTracking());
    }

    @Test
    void watermark_queries_can_be_set_for_all_objects_and_per_object() {
        SqlServerProvider configured = SqlServerProvider.builder(database)
                .watermarkQuery(WatermarkQuery.rowversion())
                .watermarkQuery("Outbox", WatermarkQuery.identity("dbo.outbox"))
                .commandTimeout(Duration.ofSeconds(30))
                .build();
        assertThat(configured.watermarkQuery(TrackedObject.of("Items", "p"))).isEqualTo(WatermarkQuery.rowversion());
        assertThat(configured.watermarkQuery(TrackedObject.of("Outbox", "p")).sql())
                .isEqualTo("SELECT CAST(IDENT_CURRENT(N'[dbo].[outbox]') AS BIGINT)");
        assertThat(configured.commandTimeout()).isEqualTo(Duration.ofSeconds(30));
    }

    @Test
    void the_builder_refuses_bad_settings() {
        SqlServerProvider.Builder builder = SqlServerProvider.builder(database);
        for (Duration bad : new Duration[] {null, Duration.ZERO, Duration.ofMillis(500), Duration.ofSeconds(-1),
                Duration.ofSeconds(Integer.MAX_VALUE + 1L)}) {
            assertThatThrownBy(() -> SqlServerProvider.builder(database).commandTimeout(bad).build())
                    .satisfies(e -> assertThat(((TidemarkException) e).code())
                            .isEqualTo(ErrorCode.INVALID_CONFIGURATION))
                    .hasMessageContaining("commandTimeout must be at least one second");
        }
        assertThatThrownBy(() -> SqlServerProvider.builder(database).watermarkQuery((WatermarkQuery) null).build())
                .hasMessageContaining("must not be null");
        assertThatThrownBy(() -> SqlServerProvider.builder(database)
                .watermarkQuery(" ", WatermarkQuery.rowversion()).build())
                .hasMessageContaining("needs the name of a tracked object");
        assertThatThrownBy(() -> SqlServerProvider.builder(null).build())
                .hasMessageContaining("dataSource must not be null");
    }

    /** Setters only store: build() reports every bad value at once, nulls included. */
    @Test
    void every_problem_is_reported_by_build() {
        SqlServerProvider.Builder builder = SqlServerProvider.builder(null).commandTimeout(null)
                .watermarkQuery((WatermarkQuery) null).watermarkQuery(null, null);
        assertThatThrownBy(builder::build)
                .satisfies(e -> assertThat(((TidemarkException) e).code()).isEqualTo(ErrorCode.INVALID_CONFIGURATION))
                .hasMessageStartingWith("SqlServerProvider has 5 configuration problems:")
                .hasMessageContaining("dataSource must not be null")
                .hasMessageContaining("commandTimeout must be at least one second")
                .hasMessageContaining("watermarkQuery must not be null")
                .hasMessageContaining("watermarkQuery needs the name of a tracked object, got null")
                .hasMessageContaining("watermarkQuery for null must not be null");
    }

    @Test
    void diagnostics_need_a_table_and_an_enabled_check() {
        TrackedObject withoutTable = TrackedObject.of("Items", "dbo.p");
        assertThat(provider.diagnose(withoutTable, OptionalLong.of(5))).isEmpty();
        SqlServerProvider off = SqlServerProvider.builder(database).agedOutCheck(false).build();
        assertThat(off.diagnose(withoutTable.table("dbo.Items"), OptionalLong.of(5))).isEmpty();
        assertThat(database.attempts()).isZero();
    }

    @Test
    void no_version_to_check_means_no_query() {
        TrackedObject object = TrackedObject.of("Items", "dbo.p").table("dbo.Items");
        assertThat(provider.diagnose(object, OptionalLong.empty())).isEmpty();
        assertThat(provider.diagnose(object, OptionalLong.of(0))).as("0 means 'everything'").isEmpty();
        assertThat(database.attempts()).isZero();
    }

    @Test
    void a_failed_check_is_itself_a_diagnostic() {
        TrackedObject object = TrackedObject.of("Items", "dbo.p").table("dbo.Items");
        List<Diagnostic> diagnostics = provider.diagnose(object, OptionalLong.of(12));
        assertThat(diagnostics).singleElement().satisfies(d -> {
            assertThat(d.code()).isEqualTo("DIAGNOSTICS_FAILED");
            assertThat(d.severity()).isEqualTo(Diagnostic.Severity.WARNING);
            assertThat(d.message()).contains("could not check the Change Tracking window of [dbo].[Items]");
            assertThat(d.details()).containsEntry("table", "[dbo].[Items]");
        });
    }

    @Test
    void preflight_without_a_connection_reports_one_failure() {
        PreflightReport report = provider.preflight(TrackedObject.of("Items", "dbo.p").table("dbo.Items"));
        assertThat(report.isOk()).isFalse();
        assertThat(report.failures()).singleElement().satisfies(c -> {
            assertThat(c.check()).isEqualTo("connection");
            assertThat(c.message()).contains("no database in this test");
        });
        assertThatThrownBy(report::throwIfFailed).isInstanceOf(TidemarkException.class)
                .hasMessageContaining("SQL Server preflight found 1 problem:");
    }
}
