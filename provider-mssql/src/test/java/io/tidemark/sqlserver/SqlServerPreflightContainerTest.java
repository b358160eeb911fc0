package io.tidemark.sqlserver;

import io.tidemark.sqlserver.ChangeProcedureGenerator.Level;
import io.tidemark.sqlserver.PreflightCheck.Status;
import io.tidemark.sync.ErrorCode;
import io.tidemark.sync.InitialSync;
import io.tidemark.sync.TidemarkException;
import io.tidemark.sync.TrackedObject;
import io.tidemark.testing.SqlServerContainerServer;
import io.tidemark.testing.SqlServerContainerTest;
import io.tidemark.testing.SqlServerDatabase;
import org.junit.jupiter.api.Test;

import javax.sql.DataSource;
import java.util.List;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/** {@link SqlServerProvider#preflight} against a real SQL Server 2022; skipped where there is no Docker. */
@SqlServerContainerTest
class SqlServerPreflightContainerTest {

    private final SqlServerDatabase database;
    private final SqlServerProvider provider;

    SqlServerPreflightContainerTest(SqlServerDatabase database) {
        this.database = database;
        this.provider = SqlServerProvider.create(database.dataSource());
    }

    @Test
    void a_ready_database_passes_every_check() {
        ItemsTable items = ItemsTable.create(database, Level.COLUMN, 1);
        TrackedObject object = items.tracked("Items").initialSync(InitialSync.INCREMENTAL);
        PreflightReport report = provider.preflight(object);
        assertThat(report.failures()).as(report.toString()).isEmpty();
        assertThat(report.throwIfFailed()).isSameAs(report);
        assertStatus(report, null, "login", Status.OK, "connected as login sa");
        assertStatus(report, null, "server version", Status.OK, "SQL Server 16.");
        assertStatus(report, null, "change tracking (database)", Status.OK, "on, current version");
        assertStatus(report, null, "change tracking retention", Status.OK, "retention 2 DAYS, auto cleanup on");
        assertStatus(report, null, "snapshot isolation", Status.OK, "ALLOW_SNAPSHOT_ISOLATION is ON");
        assertStatus(report, "Items", "@Json parameter", Status.OK, "@Json NVARCHAR(MAX)");
        assertStatus(report, "Items", "execute permission", Status.OK, "may execute");
        assertStatus(report, "Items", "view change tracking permission", Status.OK, "may read");
        assertStatus(report, "Items", "change tracking (table)", Status.OK, "columns updated are tracked");
        assertStatus(report, "Items", "starting watermark", Status.OK, "returns " + items.currentVersion());
    }

    @Test
    void procedures_that_do_not_fit_the_contract_are_named_with_what_is_wrong() {
        database.execute("CREATE PROCEDURE dbo.p_short @Json NVARCHAR(4000) AS SELECT 1 AS x");
        database.execute("CREATE PROCEDURE dbo.p_lower @json NVARCHAR(MAX), @Extra INT = 0 AS SELECT 1 AS x");
        database.execute("CREATE FUNCTION dbo.f_changes (@Json NVARCHAR(MAX)) RETURNS NVARCHAR(MAX) AS BEGIN"
                + " RETURN N'{}' END");
        PreflightReport report = provider.preflight(TrackedObject.of("short", "dbo.p_short"),
                TrackedObject.of("lower", "dbo.p_lower"), TrackedObject.of("function", "dbo.f_changes"),
                TrackedObject.of("missing", "dbo.no_such_procedure"));
        assertFailed(report, "short", "@Json parameter", ErrorCode.PROCEDURE_SIGNATURE, "@Json is NVARCHAR(4000)");
        assertStatus(report, "lower", "@Json parameter", Status.WARNING, "named @json");
        assertStatus(report, "lower", "other parameters", Status.WARNING, "@Extra INT");
        assertFailed(report, "function", "procedure", ErrorCode.PROCEDURE_SIGNATURE, "is a sql scalar function");
        assertFailed(report, "missing", "procedure", ErrorCode.PROCEDURE_NOT_FOUND, "does not exist");
    }

    @Test
    void an_unprepared_database_fails_with_the_fixes() {
        try (SqlServerDatabase bare = SqlServerContainerServer.shared().createDatabase()) {
            bare.execute("CREATE TABLE dbo.items (ItemCode NVARCHAR(20) PRIMARY KEY)");
            bare.execute("CREATE PROCEDURE dbo.items_changes @Json NVARCHAR(MAX) AS SELECT 1 AS x");
            TrackedObject object = TrackedObject.of("items", "dbo.items_changes").table("dbo.items")
                    .initialSync(InitialSync.INCREMENTAL);
            PreflightReport report = SqlServerProvider.create(bare.dataSource()).preflight(object);
            assertFailed(report, null, "change tracking (database)", ErrorCode.CHANGE_TRACKING_DISABLED,
                    "SET CHANGE_TRACKING = ON");
            assertFailed(report, null, "snapshot isolation", ErrorCode.SNAPSHOT_ISOLATION_DISABLED,
                    "snapshot isolation is not allowed in this database");
            assertFailed(report, "items", "starting watermark", ErrorCode.CHANGE_TRACKING_DISABLED,
                    "returned NULL");
            assertStatus(report, "items", "@Json parameter", Status.OK, "@Json NVARCHAR(MAX)");
            assertThatThrownBy(report::throwIfFailed)
                    .isInstanceOf(TidemarkException.class)
                    .satisfies(e -> assertThat(((TidemarkException) e).code())
                            .isEqualTo(ErrorCode.CHANGE_TRACKING_DISABLED))
                    .hasMessageContaining("SQL Server preflight found 3 problems");
        }
    }

    @Test
    void an_untracked_table_and_missing_grants_are_reported() {
        ItemsTable untracked = ItemsTable.create(database, Level.TABLE, 1);
        untracked.update("ALTER TABLE " + untracked.table() + " DISABLE CHANGE_TRACKING");
        PreflightReport asAdmin = provider.preflight(untracked.tracked("untracked"));
        assertFailed(asAdmin, "untracked", "change tracking (table)", ErrorCode.CHANGE_TRACKING_DISABLED,
                "ENABLE CHANGE_TRACKING WITH (TRACK_COLUMNS_UPDATED = ON)");

        ItemsTable items = ItemsTable.create(database, Level.TABLE, 1);
        DataSource executeOnly = database.createLogin("preflight_execute_only");
        database.execute("GRANT EXECUTE ON OBJECT::" + items.procedure().procedureName() + " TO preflight_execute_only");
        PreflightReport asLogin = SqlServerProvider.create(executeOnly).preflight(items.tracked("items"));
        assertStatus(asLogin, "items", "execute permission", Status.OK, "may execute");
        assertFailed(asLogin, "items", "table", ErrorCode.PERMISSION_DENIED, "GRANT VIEW CHANGE TRACKING ON OBJECT::");

        DataSource nothing = database.createLogin("preflight_nothing");
        PreflightReport asNobody = SqlServerProvider.create(nothing).preflight(items.tracked("items"));
        assertFailed(asNobody, "items", "procedure", ErrorCode.PROCEDURE_NOT_FOUND, "grant EXECUTE");
    }

    private static void assertStatus(PreflightReport report, String object, String check, Status status,
                                     String fragment) {
        List<PreflightCheck> matching = report.checks().stream()
                .filter(c -> c.check().equals(check) && c.objectName().orElse(null) == null == (object == null)
                        && (object == null || c.objectName().get().equals(object)))
                .toList();
        assertThat(matching).as("check '%s' of %s in\n%s", check, object, report).isNotEmpty()
                .anySatisfy(c -> {
                    assertThat(c.status()).isEqualTo(status);
                    assertThat(c.message()).contains(fragment);
                });
    }

    private static void assertFailed(PreflightReport report, String object, String check, ErrorCode code,
                                     String fragment) {
        assertStatus(report, object, check, Status.FAILED, fragment);
        assertThat(report.failures()).anySatisfy(c -> {
            assertThat(c.check()).isEqualTo(check);
            assertThat(c.code()).contains(code);
        });
    }
}
