package io.tidemark.sqlserver.internal;

import com.microsoft.sqlserver.jdbc.SQLServerException;
import io.tidemark.sync.ErrorCode;
import io.tidemark.sync.TidemarkException;
import io.tidemark.sync.TrackedObject;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

import java.sql.SQLException;
import java.sql.SQLTimeoutException;
import java.util.stream.Stream;

import static org.assertj.core.api.Assertions.assertThat;
import static org.junit.jupiter.params.provider.Arguments.arguments;

/**
 * Every failure the provider can meet, built as mssql-jdbc builds it (see {@link ServerErrors}), with the
 * messages SQL Server sends, mapped to an error code and a message that says what to do.
 */
class SqlServerErrorsTest {

    private static final TrackedObject ITEMS = TrackedObject.of("Items", "dbo.get_item_changes");

    static Stream<Arguments> serverErrors() {
        return Stream.of(
                arguments("procedure missing", ServerErrors.server(2812, 62, 16,
                                "Could not find stored procedure 'dbo.get_item_changes'."),
                        ErrorCode.PROCEDURE_NOT_FOUND, new String[] {"procedure dbo.get_item_changes does not exist",
                                "Could not find stored procedure", "(error 2812, SQLState S0062)",
                                "taking @Json NVARCHAR(MAX)", "the database that holds it"}),
                arguments("wrong parameter name", ServerErrors.server(8145, 2, 16,
                                "@Json is not a parameter for procedure get_item_changes."),
                        ErrorCode.PROCEDURE_SIGNATURE, new String[] {"cannot be called as EXEC dbo.get_item_changes"
                                + " @Json = ?", "@Json is not a parameter", "(error 8145", "exactly one parameter, @Json"
                                + " NVARCHAR(MAX)", "case-sensitive"}),
                arguments("another parameter without default", ServerErrors.server(201, 4, 16,
                                "Procedure or function 'get_item_changes' expects parameter '@Since', which was not"
                                        + " supplied."),
                        ErrorCode.PROCEDURE_SIGNATURE, new String[] {"expects parameter '@Since'", "(error 201",
                                "other parameters need defaults"}),
                arguments("no parameter at all", ServerErrors.server(8144, 2, 16,
                                "Procedure or function get_item_changes has too many arguments specified."),
                        ErrorCode.PROCEDURE_SIGNATURE, new String[] {"too many arguments", "(error 8144"}),
                arguments("parameter of another type", ServerErrors.server(206, 2, 16,
                                "Operand type clash: nvarchar(max) is incompatible with xml"),
                        ErrorCode.PROCEDURE_SIGNATURE, new String[] {"Operand type clash", "(error 206"}),
                arguments("snapshot isolation not allowed", ServerErrors.server(3952, 1, 16,
                                "Snapshot isolation transaction failed accessing database 'shop' because snapshot"
                                        + " isolation is not allowed in this database. Use ALTER DATABASE to allow"
                                        + " snapshot isolation.", "get_item_changes", 31),
                        ErrorCode.SNAPSHOT_ISOLATION_DISABLED, new String[] {"snapshot isolation is not allowed in this"
                                + " database", "(error 3952, SQLState S0001, in get_item_changes at line 31)",
                                "read the version and the rows in one consistent snapshot",
                                "ALTER DATABASE CURRENT SET ALLOW_SNAPSHOT_ISOLATION ON"}),
                arguments("called inside another transaction", ServerErrors.server(3951, 1, 16,
                                "Transaction failed in database 'shop' because the statement was run under snapshot"
                                        + " isolation but the transaction did not start in snapshot isolation."),
                        ErrorCode.PROCEDURE_FAILED, new String[] {"did not start under snapshot isolation",
                                "auto-commit"}),
                arguments("change tracking disabled on the table", ServerErrors.server(22105, 1, 16,
                                "Change tracking is not enabled on table 'dbo.Items'.", "get_item_changes", 40),
                        ErrorCode.CHANGE_TRACKING_DISABLED, new String[] {"Change Tracking is not enabled on a table",
                                "Change tracking is not enabled on table 'dbo.Items'.", "(error 22105",
                                "ChangeTrackingSetup", "VIEW CHANGE TRACKING"}),
                arguments("generated: change tracking disabled on the database", ServerErrors.server(
                                SqlServerErrors.GENERATED_DATABASE_NOT_TRACKED, 1, 16,
                                "Tidemark: Change Tracking is not enabled on this database; [dbo].[Items_changes] cannot"
                                        + " read changes. Run ALTER DATABASE CURRENT SET CHANGE_TRACKING = ON.",
                                "Items_changes", 33),
                        ErrorCode.CHANGE_TRACKING_DISABLED, new String[] {"Change Tracking is not enabled on the"
                                + " database", "(error 51001", "SET CHANGE_TRACKING = ON"}),
                arguments("generated: change tracking disabled on the table", ServerErrors.server(
                                SqlServerErrors.GENERATED_TABLE_NOT_TRACKED, 1, 16,
                                "Tidemark: Change Tracking is not enabled on table [dbo].[Items], or the caller lacks"
                                        + " VIEW CHANGE TRACKING on it.", "Items_changes", 35),
                        ErrorCode.CHANGE_TRACKING_DISABLED, new String[] {"(error 51002", "ChangeTrackingSetup"}),
                arguments("generated: no view change tracking", ServerErrors.server(
                                SqlServerErrors.GENERATED_NO_VIEW_CHANGE_TRACKING, 1, 16,
                                "Tidemark: the caller lacks VIEW CHANGE TRACKING on table [dbo].[Items] (or the table"
                                        + " does not exist).", "Items_changes", 38),
                        ErrorCode.PERMISSION_DENIED, new String[] {"(error 51004", "VIEW CHANGE TRACKING on the tables"
                                + " it reads"}),
                arguments("generated: a column was dropped", ServerErrors.server(
                                SqlServerErrors.GENERATED_COLUMN_MISSING, 1, 16,
                                "Tidemark: column [Assortment] of [dbo].[Items] no longer exists; regenerate"
                                        + " [dbo].[Items_changes].", "Items_changes", 44),
                        ErrorCode.SCHEMA_DRIFT, new String[] {"generated for a column that no longer exists",
                                "Regenerate the procedure"}),
                arguments("generated: bad request", ServerErrors.server(SqlServerErrors.GENERATED_BAD_REQUEST, 1, 16,
                                "Tidemark: the request has no valid fromVersion", "Items_changes", 21),
                        ErrorCode.PROCEDURE_FAILED, new String[] {"refused its request", "(error 51000"}),
                arguments("execute permission denied", ServerErrors.server(229, 5, 14,
                                "The EXECUTE permission was denied on the object 'get_item_changes', database 'shop',"
                                        + " schema 'dbo'."),
                        ErrorCode.PERMISSION_DENIED, new String[] {"permission denied calling dbo.get_item_changes",
                                "The EXECUTE permission was denied", "(error 229, SQLState S0005",
                                "Grant EXECUTE on the procedure", "LeastPrivilegeRole", "preflight"}),
                arguments("view change tracking denied", ServerErrors.server(229, 5, 14,
                                "The VIEW CHANGE TRACKING permission was denied on the object 'Items', database 'shop',"
                                        + " schema 'dbo'.", "get_item_changes", 40),
                        ErrorCode.PERMISSION_DENIED, new String[] {"VIEW CHANGE TRACKING permission was denied",
                                "VIEW CHANGE TRACKING on the tables it reads"}),
                arguments("column permission denied", ServerErrors.server(230, 1, 14,
                                "The SELECT permission was denied on the column 'Price' of the object 'Items', database"
                                        + " 'shop', schema 'dbo'."),
                        ErrorCode.PERMISSION_DENIED, new String[] {"(error 230"}),
                arguments("login failed", ServerErrors.server(18456, 1, 14, "Login failed for user 'tidemark'."),
                        ErrorCode.CONNECTION_FAILED, new String[] {"could not log in to the data source while calling"
                                + " dbo.get_item_changes", "Login failed for user 'tidemark'.",
                                "Check the credentials (user name and password)"}),
                arguments("database cannot be opened", ServerErrors.server(4060, 1, 11,
                                "Cannot open database \"shop\" requested by the login. The login failed."),
                        ErrorCode.PERMISSION_DENIED, new String[] {"the login cannot reach the database",
                                "user name, the password and the database"}),
                arguments("deadlock victim", ServerErrors.server(1205, 51, 13, "Transaction (Process ID 57) was"
                                + " deadlocked on lock resources with another process and has been chosen as the deadlock"
                                + " victim. Rerun the transaction."),
                        ErrorCode.PROCEDURE_FAILED, new String[] {"deadlock victim", "(error 1205, SQLState 40001",
                                "the next cycle tries again"}),
                arguments("ddl during the snapshot", ServerErrors.server(3961, 1, 16, "Snapshot isolation transaction"
                                + " failed in database 'shop' because the object accessed by the statement has been"
                                + " modified by a DDL statement in another concurrent transaction since the start of"
                                + " this transaction."),
                        ErrorCode.PROCEDURE_FAILED, new String[] {"DDL changed during the call", "tries again"}),
                arguments("table dropped", ServerErrors.server(208, 1, 16, "Invalid object name 'dbo.Items'."),
                        ErrorCode.PROCEDURE_FAILED, new String[] {"refers to an object that does not exist",
                                "(error 208, SQLState S0002"}),
                arguments("column dropped from a hand-written procedure", ServerErrors.server(207, 1, 16,
                                "Invalid column name 'Assortment'.", "get_item_changes", 18),
                        ErrorCode.SCHEMA_DRIFT, new String[] {"refers to a column that does not exist",
                                "Invalid column name 'Assortment'.", "regenerate it"}),
                arguments("anything else", ServerErrors.server(50000, 1, 16, "custom failure", "get_item_changes", 12),
                        ErrorCode.PROCEDURE_FAILED, new String[] {"calling dbo.get_item_changes failed: custom failure"
                                + " (error 50000, SQLState S0001, in get_item_changes at line 12)"}),
                arguments("connection lost", ServerErrors.driver("Connection reset", "08S01", 0),
                        ErrorCode.CONNECTION_FAILED, new String[] {"could not connect to the data source while calling"
                                + " dbo.get_item_changes: Connection reset (SQLState 08S01)",
                                "Check the JDBC URL, the credentials and the network"}));
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("serverErrors")
    void maps_each_failure_to_a_code_and_a_message_that_says_what_to_do(String what, SQLServerException e,
                                                                       ErrorCode code, String[] fragments) {
        TidemarkException mapped = SqlServerErrors.map(e, null, ITEMS, false, 300);
        assertThat(mapped.code()).as(what).isEqualTo(code);
        assertThat(mapped.objectName()).contains("Items");
        assertThat(mapped.getMessage()).startsWith("[Items] ").contains(fragments);
        assertThat(mapped.getCause()).isSameAs(e);
    }

    @Test
    void the_driver_timeout_is_a_procedure_timeout() {
        // What mssql-jdbc throws when setQueryTimeout expires: a SQLTimeoutException around its own exception.
        SQLServerException driver = ServerErrors.driver("The query has timed out.", "HY008", 0);
        SQLTimeoutException timeout = new SQLTimeoutException(driver.getMessage(), driver.getSQLState(),
                driver.getErrorCode(), driver);
        TidemarkException mapped = SqlServerErrors.map(timeout, null, ITEMS, false, 300);
        assertThat(mapped.code()).isEqualTo(ErrorCode.PROCEDURE_TIMEOUT);
        assertThat(mapped.getMessage()).contains("ran longer than the command timeout of 300 s")
                .contains("The query has timed out.").contains("maxRows").contains("commandTimeout");
    }

    @Test
    void a_timeout_while_rows_are_read_is_a_procedure_timeout_too() {
        // During row reads the driver reports the timeout as a plain SQLServerException with SQLState HY008.
        TidemarkException mapped = SqlServerErrors.map(ServerErrors.driver("The query has timed out.", "HY008", 0), null,
                ITEMS, false, 5);
        assertThat(mapped.code()).isEqualTo(ErrorCode.PROCEDURE_TIMEOUT);
        assertThat(mapped.getMessage()).contains("command timeout of 5 s");
    }

    @Test
    void a_cancel_by_the_closing_engine_is_not_a_timeout() {
        TidemarkException mapped = SqlServerErrors.map(ServerErrors.driver("The query was canceled.", "HY008", 0), null,
                ITEMS, true, 300);
        assertThat(mapped.code()).isEqualTo(ErrorCode.ENGINE_STATE);
        assertThat(mapped.getMessage()).contains("cancelled because the engine is closing")
                .contains("the watermark stays");
    }

    @Test
    void the_cause_is_found_behind_a_follow_up_error() {
        SQLException first = ServerErrors.server(3998, 1, 16,
                "Uncommittable transaction is detected at the end of the batch. The transaction is rolled back.");
        first.setNextException(ServerErrors.server(3952, 1, 16, "Snapshot isolation transaction failed accessing"
                + " database 'shop' because snapshot isolation is not allowed in this database."));
        assertThat(SqlServerErrors.map(first, null, ITEMS, false, 300).code())
                .isEqualTo(ErrorCode.SNAPSHOT_ISOLATION_DISABLED);
    }

    @Test
    void watermark_query_failures_say_nothing_was_stored() {
        String query = "Change Tracking (SELECT CHANGE_TRACKING_CURRENT_VERSION())";
        TidemarkException denied = SqlServerErrors.mapWatermark(ServerErrors.server(229, 5, 14,
                "The SELECT permission was denied on the object 'seq', database 'shop', schema 'dbo'."), null, ITEMS, query,
                false, 300);
        assertThat(denied.code()).isEqualTo(ErrorCode.PERMISSION_DENIED);
        assertThat(denied.getMessage()).contains("permission denied running the watermark query");

        TidemarkException other = SqlServerErrors.mapWatermark(ServerErrors.server(208, 1, 16,
                "Invalid object name 'dbo.outbox'."), null, ITEMS, query, false, 300);
        assertThat(other.code()).isEqualTo(ErrorCode.WATERMARK_UNAVAILABLE);
        assertThat(other.getMessage()).contains("could not read the starting watermark with " + query)
                .contains("Nothing was stored");

        TidemarkException timeout = SqlServerErrors.mapWatermark(ServerErrors.driver("The query has timed out.",
                "HY008", 0), null, ITEMS, query, false, 7);
        assertThat(timeout.code()).isEqualTo(ErrorCode.PROCEDURE_TIMEOUT);
        assertThat(timeout.getMessage()).contains("command timeout of 7 s");
    }

    @Test
    void details_name_the_number_state_and_place() {
        assertThat(SqlServerErrors.detail(ServerErrors.server(50000, 3, 16, "boom", "p", 9)))
                .isEqualTo("boom (error 50000, SQLState S0003, in p at line 9)");
        assertThat(SqlServerErrors.detail(ServerErrors.server(50000, 3, 16, "boom")))
                .isEqualTo("boom (error 50000, SQLState S0003)");
        assertThat(SqlServerErrors.detail(new SQLException("plain", null, 7))).isEqualTo("plain (error 7)");
    }
}
