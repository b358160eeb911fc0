package io.tidemark.sqlserver;

import com.fasterxml.jackson.core.JsonParser;
import com.fasterxml.jackson.core.JsonToken;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.tidemark.sqlserver.ChangeProcedureGenerator.Level;
import io.tidemark.sync.CheckReport;
import io.tidemark.sync.ErrorCode;
import io.tidemark.sync.InMemoryWatermarkStore;
import io.tidemark.sync.InitialSync;
import io.tidemark.sync.ObjectReport;
import io.tidemark.sync.Outcome;
import io.tidemark.sync.SyncEngine;
import io.tidemark.sync.TidemarkException;
import io.tidemark.sync.TrackedObject;
import io.tidemark.sync.spi.CallContext;
import io.tidemark.sync.spi.ChangeRequest;
import io.tidemark.sync.spi.ResponsePayload;
import io.tidemark.testing.RecordingDestination;
import io.tidemark.testing.SqlServerContainerServer;
import io.tidemark.testing.SqlServerContainerTest;
import io.tidemark.testing.SqlServerDatabase;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.function.Executable;

import javax.sql.DataSource;
import java.sql.Connection;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.assertj.core.api.Assertions.tuple;

/**
 * The provider against a real SQL Server 2022: reading a document of many FOR JSON rows through the driver,
 * leaving the session as it found it, and every failure it can meet, raised by the server itself. Skipped where
 * there is no Docker.
 */
@SqlServerContainerTest
class SqlServerProviderContainerTest {

    private static final ObjectMapper JSON = new ObjectMapper();

    private final SqlServerDatabase database;
    private final SqlServerProvider provider;

    SqlServerProviderContainerTest(SqlServerDatabase database) {
        this.database = database;
        this.provider = SqlServerProvider.create(database.dataSource());
    }

    @Test
    void a_large_change_set_is_read_across_many_for_json_rows() throws Exception {
        ItemsTable items = ItemsTable.create(database, Level.TABLE, 0);
        String piece = "é 日本 😀 \"q\" \\ ";
        database.execute("INSERT INTO " + items.table() + " (ItemCode, Description, Assortment, Price)"
                + " SELECT CONCAT(N'L', n), REPLICATE(CAST(N'" + piece.replace("'", "''") + "' AS NVARCHAR(MAX)), 100)"
                + " + CAST(n AS NVARCHAR(10)), N'L', n"
                + " FROM (SELECT TOP (2000) ROW_NUMBER() OVER (ORDER BY (SELECT NULL)) AS n"
                + " FROM sys.all_objects AS a CROSS JOIN sys.all_objects AS b) AS numbers");
        try (ResponsePayload payload = provider.invoke(items.tracked("large"), ChangeRequest.sync(0),
                CallContext.none())) {
            // About 3.6 million characters: SQL Server sends them as some 1,700 rows of about 2,000.
            assertThat(payload.size()).isGreaterThan(2000L * 1500);
            int rows = 0;
            try (JsonParser p = payload.openParser(JSON.getFactory())) {
                JsonToken t;
                while ((t = p.nextToken()) != null) {
                    if (t == JsonToken.FIELD_NAME && p.currentName().equals("ItemCode")) {
                        p.nextToken();
                        String code = p.getText();
                        assertThat(p.nextToken()).isEqualTo(JsonToken.FIELD_NAME);
                        assertThat(p.currentName()).isEqualTo("Description");
                        p.nextToken();
                        assertThat(p.getText()).isEqualTo(piece.repeat(100) + code.substring(1));
                        rows++;
                    }
                }
            }
            assertThat(rows).isEqualTo(2000);
        }
    }

    @Test
    void the_call_leaves_the_session_as_it_found_it() throws SQLException {
        ItemsTable items = ItemsTable.create(database, Level.COLUMN, 2);
        try (Connection shared = database.dataSource().getConnection()) {
            shared.setAutoCommit(false); // as a pool configured with auto-commit off hands connections out
            SqlServerProvider onShared = SqlServerProvider.create(new SingleConnectionDataSource(shared));
            try (ResponsePayload payload = onShared.invoke(items.tracked("session"), ChangeRequest.sync(0),
                    CallContext.none())) {
                assertThat(payload.isBlank()).isFalse();
            }
            assertThat(shared.getAutoCommit()).isFalse();
            try (Statement s = shared.createStatement(); ResultSet rs = s.executeQuery("SELECT"
                    + " @@OPTIONS & 512,"    // NOCOUNT
                    + " @@OPTIONS & 16384,"  // XACT_ABORT
                    + " @@OPTIONS & 8,"      // ANSI_WARNINGS
                    + " (SELECT transaction_isolation_level FROM sys.dm_exec_sessions WHERE session_id = @@SPID)")) {
                rs.next();
                assertThat(rs.getInt(1)).as("NOCOUNT is off again").isZero();
                assertThat(rs.getInt(2)).as("XACT_ABORT is off again").isZero();
                assertThat(rs.getInt(3)).as("ANSI_WARNINGS is untouched").isEqualTo(8);
                assertThat(rs.getInt(4)).as("READ COMMITTED, not SNAPSHOT").isEqualTo(2);
            }
            shared.rollback();
        }
    }

    @Test
    void the_start_up_check_reports_every_wrong_procedure_at_once() {
        database.execute("CREATE PROCEDURE dbo.chk_good @Json NVARCHAR(MAX) AS SELECT 1 AS x");
        database.execute("CREATE PROCEDURE dbo.chk_short @Json NVARCHAR(4000) AS SELECT 1 AS x");
        database.execute("CREATE PROCEDURE dbo.chk_payload @Payload NVARCHAR(MAX) AS SELECT 1 AS x");
        database.execute("CREATE VIEW dbo.chk_view AS SELECT 1 AS x");

        List<CheckReport.Problem> problems = provider.check(List.of(
                TrackedObject.of("Good", "dbo.chk_good"),
                TrackedObject.of("Missing", "dbo.chk_missing"),
                TrackedObject.of("Short", "dbo.chk_short"),
                TrackedObject.of("Payload", "dbo.chk_payload"),
                TrackedObject.of("View", "dbo.chk_view")));

        assertThat(problems).extracting(CheckReport.Problem::subject, CheckReport.Problem::code).containsExactly(
                tuple("Missing", ErrorCode.PROCEDURE_NOT_FOUND),
                tuple("Short", ErrorCode.PROCEDURE_SIGNATURE),
                tuple("Payload", ErrorCode.PROCEDURE_SIGNATURE),
                tuple("View", ErrorCode.PROCEDURE_SIGNATURE));
        assertThat(problems.get(1).message()).contains("nvarchar(4000)").contains("NVARCHAR(MAX)");
        assertThat(problems.get(2).message()).contains("has no @Json parameter");
        assertThat(problems.get(3).message()).contains("is a view");
    }

    @Test
    void the_reachability_probe_answers_reachable_when_the_server_answers() {
        assertThat(provider.probe(java.time.Duration.ofSeconds(5)))
                .isEqualTo(io.tidemark.sync.spi.ChangeProvider.Reachability.REACHABLE);
    }

    @Test
    void a_missing_procedure_is_procedure_not_found() {
        assertFails(() -> invoke("dbo.no_such_procedure"), ErrorCode.PROCEDURE_NOT_FOUND,
                "Could not find stored procedure", "(error 2812");
    }

    @Test
    void a_procedure_without_a_json_parameter_is_a_signature_error() {
        database.execute("CREATE PROCEDURE dbo.p_payload @Payload NVARCHAR(MAX) AS SELECT 1 AS x");
        assertFails(() -> invoke("dbo.p_payload"), ErrorCode.PROCEDURE_SIGNATURE,
                "@Json is not a parameter", "(error 8145");
        database.execute("CREATE PROCEDURE dbo.p_none AS SELECT 1 AS x");
        assertFails(() -> invoke("dbo.p_none"), ErrorCode.PROCEDURE_SIGNATURE, "too many arguments", "(error 8144");
        database.execute("CREATE PROCEDURE dbo.p_extra @Json NVARCHAR(MAX), @Since BIGINT AS SELECT 1 AS x");
        assertFails(() -> invoke("dbo.p_extra"), ErrorCode.PROCEDURE_SIGNATURE, "@Since", "(error 201");
    }

    @Test
    void snapshot_isolation_not_allowed_is_reported_with_the_fix() {
        try (SqlServerDatabase noSnapshot = SqlServerContainerServer.shared().createDatabase()) {
            noSnapshot.execute("ALTER DATABASE CURRENT SET CHANGE_TRACKING = ON");
            noSnapshot.execute("CREATE TABLE dbo.items (ItemCode NVARCHAR(20) PRIMARY KEY, Description NVARCHAR(50))");
            noSnapshot.execute("ALTER TABLE dbo.items ENABLE CHANGE_TRACKING WITH (TRACK_COLUMNS_UPDATED = ON)");
            noSnapshot.execute("INSERT INTO dbo.items VALUES (N'A', N'a')");
            ChangeProcedureGenerator generated = ChangeProcedureGenerator.forTable("dbo.items")
                    .keyColumns("ItemCode").columns("Description").build();
            generated.install(noSnapshot.dataSource());
            SqlServerProvider onIt = SqlServerProvider.create(noSnapshot.dataSource());
            assertFails(() -> onIt.invoke(generated.trackedObject("items"), ChangeRequest.sync(0),
                            CallContext.none()).close(),
                    ErrorCode.SNAPSHOT_ISOLATION_DISABLED, "snapshot isolation is not allowed in this database",
                    "(error 3952", "ALLOW_SNAPSHOT_ISOLATION ON");
        }
    }

    @Test
    void change_tracking_off_is_reported_for_the_database_and_the_table() {
        try (SqlServerDatabase untracked = SqlServerContainerServer.shared().createDatabase()) {
            SqlServerProvider onIt = SqlServerProvider.create(untracked.dataSource());
            TrackedObject object = TrackedObject.of("items", "dbo.items_changes").initialSync(InitialSync.INCREMENTAL);
            assertFails(() -> onIt.currentVersion(object), ErrorCode.CHANGE_TRACKING_DISABLED,
                    "Change Tracking is not enabled on database " + untracked.name(),
                    "CHANGE_TRACKING_CURRENT_VERSION() returned NULL");
        }
        ItemsTable items = ItemsTable.create(database, Level.TABLE, 1);
        items.update("ALTER TABLE " + items.table() + " DISABLE CHANGE_TRACKING");
        // Either the generated check (51002) or SQL Server itself (22105, when it recompiles the procedure).
        assertFails(() -> invoke(items.tracked("off")), ErrorCode.CHANGE_TRACKING_DISABLED, "Change Tracking");
    }

    @Test
    void a_command_timeout_is_a_procedure_timeout() {
        database.execute("CREATE PROCEDURE dbo.p_slow @Json NVARCHAR(MAX) AS BEGIN WAITFOR DELAY '00:00:20';"
                + " SELECT 1 AS [Metadata.Sync.Version] FOR JSON PATH, WITHOUT_ARRAY_WRAPPER; END");
        SqlServerProvider impatient = SqlServerProvider.builder(database.dataSource())
                .commandTimeout(Duration.ofSeconds(1)).build();
        long started = System.nanoTime();
        assertFails(() -> impatient.invoke(TrackedObject.of("slow", "dbo.p_slow"), ChangeRequest.sync(1),
                CallContext.none()), ErrorCode.PROCEDURE_TIMEOUT, "command timeout of 1 s");
        assertThat(Duration.ofNanos(System.nanoTime() - started)).isLessThan(Duration.ofSeconds(15));
    }

    @Test
    void a_call_cancelled_by_the_engine_stops_at_once() throws Exception {
        database.execute("CREATE PROCEDURE dbo.p_waiting @Json NVARCHAR(MAX) AS BEGIN WAITFOR DELAY '00:01:00';"
                + " SELECT 1 AS [Metadata.Sync.Version] FOR JSON PATH, WITHOUT_ARRAY_WRAPPER; END");
        CancellableCall call = new CancellableCall();
        ExecutorService executor = Executors.newSingleThreadExecutor();
        try {
            Future<ResponsePayload> running = executor.submit(() -> provider.invoke(
                    TrackedObject.of("waiting", "dbo.p_waiting"), ChangeRequest.sync(1), call));
            ServerWait.until(database.dataSource(), "SELECT COUNT(*) FROM sys.dm_exec_requests"
                    + " WHERE wait_type = 'WAITFOR' AND session_id <> @@SPID AND database_id = DB_ID()",
                    Duration.ofSeconds(30));
            call.cancel();
            assertThatThrownBy(() -> running.get(30, TimeUnit.SECONDS))
                    .hasCauseInstanceOf(TidemarkException.class)
                    .satisfies(e -> assertThat(((TidemarkException) e.getCause()).code())
                            .isEqualTo(ErrorCode.ENGINE_STATE))
                    .hasMessageContaining("cancelled because the engine is closing");
        } finally {
            executor.shutdownNow();
        }
    }

    @Test
    void permission_denied_is_reported_with_the_grant_to_add() {
        ItemsTable items = ItemsTable.create(database, Level.TABLE, 1);
        DataSource nobody = database.createLogin("tidemark_no_rights");
        assertFails(() -> SqlServerProvider.create(nobody).invoke(items.tracked("denied"), ChangeRequest.sync(0),
                CallContext.none()), ErrorCode.PERMISSION_DENIED, "EXECUTE permission was denied", "(error 229");

        // EXECUTE alone is not enough: CHANGETABLE wants VIEW CHANGE TRACKING, and the procedure says so.
        DataSource executeOnly = database.createLogin("tidemark_execute_only");
        database.execute("GRANT EXECUTE ON OBJECT::" + items.procedure().procedureName() + " TO tidemark_execute_only");
        assertFails(() -> SqlServerProvider.create(executeOnly).invoke(items.tracked("denied"), ChangeRequest.sync(0),
                CallContext.none()), ErrorCode.PERMISSION_DENIED, "VIEW CHANGE TRACKING", "(error 51004");
    }

    @Test
    void a_stray_debug_select_before_the_document_is_reported_as_such() {
        database.execute("CREATE PROCEDURE dbo.p_debug @Json NVARCHAR(MAX) AS BEGIN SET NOCOUNT ON;"
                + " SELECT @Json AS received, 1 AS step;"
                + " SELECT 7 AS [Metadata.Sync.Version] FOR JSON PATH, WITHOUT_ARRAY_WRAPPER; END");
        assertFails(() -> invoke("dbo.p_debug"), ErrorCode.INVALID_RESPONSE,
                "it returned a result set before its JSON document (result set #2): #1 with columns received nvarchar,"
                        + " step int", "debug SELECT");
        database.execute("CREATE PROCEDURE dbo.p_nothing @Json NVARCHAR(MAX) AS SET NOCOUNT ON;");
        assertFails(() -> invoke("dbo.p_nothing"), ErrorCode.EMPTY_RESPONSE, "returned no result set");
    }

    @Test
    void a_procedure_returning_its_json_from_a_variable_is_read_too() throws Exception {
        database.execute("CREATE PROCEDURE dbo.p_variable @Json NVARCHAR(MAX) AS BEGIN SET NOCOUNT ON;"
                + " DECLARE @doc NVARCHAR(MAX) = (SELECT 3 AS [Metadata.Sync.Version],"
                + " (SELECT 3 AS [$version], N'x' AS Id FOR JSON PATH) AS [Data] FOR JSON PATH, WITHOUT_ARRAY_WRAPPER);"
                + " SELECT @doc AS document; END");
        RecordingDestination recorder = new RecordingDestination();
        try (SyncEngine engine = SyncEngine.builder().provider(provider).watermarks(InMemoryWatermarkStore.create())
                .track(TrackedObject.of("variable", "dbo.p_variable")).destination("recorder", recorder).build()) {
            ObjectReport report = engine.runOnce("variable");
            assertThat(report.outcome()).as(report.toString()).isEqualTo(Outcome.DELIVERED);
            assertThat(report.toVersion()).hasValue(3);
        }
    }

    private ResponsePayload invoke(String procedure) {
        return invoke(TrackedObject.of("probe", procedure));
    }

    private ResponsePayload invoke(TrackedObject object) {
        return provider.invoke(object, ChangeRequest.sync(1), CallContext.none());
    }

    private static void assertFails(Executable call, ErrorCode code, String... fragments) {
        assertThatThrownBy(call::execute)
                .isInstanceOf(TidemarkException.class)
                .satisfies(e -> assertThat(((TidemarkException) e).code()).as(e.getMessage()).isEqualTo(code))
                .hasMessageContainingAll(fragments);
    }
}
