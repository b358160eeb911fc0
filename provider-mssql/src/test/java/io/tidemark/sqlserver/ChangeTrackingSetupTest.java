package io.tidemark.sqlserver;

import io.tidemark.sync.testsupport.Golden;
import io.tidemark.sqlserver.internal.TSqlScript;
import io.tidemark.sync.ErrorCode;
import io.tidemark.sync.TidemarkException;
import org.junit.jupiter.api.Test;

import java.time.Duration;
import java.util.List;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

class ChangeTrackingSetupTest {

    @Test
    void matches_the_golden_file() {
        ChangeTrackingSetup setup = ChangeTrackingSetup.builder()
                .retention(Duration.ofDays(7))
                .table("dbo.Items")
                .table("[sales data].[Order Lines]", false)
                .build();
        Golden.assertMatches("setup.sql", setup.script());
    }

    @Test
    void enables_change_tracking_with_retention_and_cleanup_and_snapshot_isolation() {
        String script = ChangeTrackingSetup.builder().table("dbo.Items").build().script();
        assertThat(script)
                .contains("ALTER DATABASE CURRENT SET CHANGE_TRACKING = ON (CHANGE_RETENTION = 7 DAYS, AUTO_CLEANUP = ON);")
                .contains("ALTER DATABASE CURRENT SET ALLOW_SNAPSHOT_ISOLATION ON;")
                .contains("ALTER TABLE [dbo].[Items] ENABLE CHANGE_TRACKING WITH (TRACK_COLUMNS_UPDATED = ON);");
    }

    @Test
    void is_idempotent_and_never_lowers_a_longer_retention() {
        String script = ChangeTrackingSetup.builder().retention(Duration.ofHours(36)).table("Items").build().script();
        assertThat(script)
                .contains("IF NOT EXISTS (SELECT 1 FROM sys.change_tracking_databases WHERE database_id = DB_ID())\n"
                        + "    ALTER DATABASE CURRENT SET CHANGE_TRACKING = ON (CHANGE_RETENTION = 36 HOURS")
                // raised only when the current retention, in minutes, is shorter than 36 hours
                .contains("CASE retention_period_units WHEN 1 THEN 1 WHEN 2 THEN 60 ELSE 1440 END < 2160)\n"
                        + "    ALTER DATABASE CURRENT SET CHANGE_TRACKING (CHANGE_RETENTION = 36 HOURS);")
                .contains("NOT IN (1, 3)\n    ALTER DATABASE CURRENT SET ALLOW_SNAPSHOT_ISOLATION ON;")
                .contains("IF NOT EXISTS (SELECT 1 FROM sys.change_tracking_tables WHERE object_id ="
                        + " OBJECT_ID(N'[dbo].[Items]'))\n    ALTER TABLE [dbo].[Items] ENABLE CHANGE_TRACKING");
    }

    @Test
    void fails_clearly_on_a_missing_table_or_primary_key() {
        String script = ChangeTrackingSetup.builder().table("dbo.Items").build().script();
        assertThat(script)
                .contains("IF OBJECT_ID(N'[dbo].[Items]', N'U') IS NULL\n    THROW 51010, N'Tidemark setup: table"
                        + " [dbo].[Items] does not exist.', 1;")
                .contains("IF OBJECTPROPERTY(OBJECT_ID(N'[dbo].[Items]'), 'TableHasPrimaryKey') = 0\n    THROW 51011,");
    }

    @Test
    void each_step_is_its_own_batch() {
        List<String> batches = TSqlScript.batches(ChangeTrackingSetup.builder().table("a").table("b").build().script());
        assertThat(batches).hasSize(4);
        assertThat(batches.get(0)).contains("SET CHANGE_TRACKING = ON");
        assertThat(batches.get(1)).contains("ALLOW_SNAPSHOT_ISOLATION ON");
        assertThat(batches.get(2)).contains("ALTER TABLE [dbo].[a] ENABLE");
        assertThat(batches.get(3)).contains("ALTER TABLE [dbo].[b] ENABLE");
    }

    @Test
    void retention_is_written_in_the_largest_exact_unit() {
        assertThat(retention(Duration.ofDays(2))).isEqualTo("2 DAYS");
        assertThat(retention(Duration.ofHours(25))).isEqualTo("25 HOURS");
        assertThat(retention(Duration.ofMinutes(90))).isEqualTo("90 MINUTES");
        assertThat(retention(Duration.ofMinutes(1))).isEqualTo("1 MINUTES");
    }

    @Test
    void refuses_a_retention_that_is_not_whole_minutes_and_duplicate_tables() {
        for (Duration bad : new Duration[] {Duration.ZERO, Duration.ofSeconds(90), Duration.ofMinutes(-5), null}) {
            assertThatThrownBy(() -> ChangeTrackingSetup.builder().retention(bad).build())
                    .isInstanceOf(TidemarkException.class)
                    .hasMessageContaining("retention must be a whole number of minutes")
                    .satisfies(e -> assertThat(((TidemarkException) e).code()).isEqualTo(ErrorCode.INVALID_CONFIGURATION));
        }
        assertThatThrownBy(() -> ChangeTrackingSetup.builder().table("Items").table("dbo.[Items]").build())
                .hasMessageContaining("table [dbo].[Items] is listed twice");
        assertThatThrownBy(() -> ChangeTrackingSetup.builder().table("Items;--").build())
                .isInstanceOf(TidemarkException.class)
                .satisfies(e -> assertThat(((TidemarkException) e).code()).isEqualTo(ErrorCode.INVALID_CONFIGURATION));
    }

    /** Setters only store: build() reports every bad value at once, nulls included. */
    @Test
    void every_problem_is_reported_by_build() {
        ChangeTrackingSetup.Builder builder = ChangeTrackingSetup.builder().retention(null).table(null)
                .table("Items;--").table("Items").table("dbo.Items");
        assertThatThrownBy(builder::build)
                .satisfies(e -> assertThat(((TidemarkException) e).code()).isEqualTo(ErrorCode.INVALID_CONFIGURATION))
                .hasMessageStartingWith("ChangeTrackingSetup has 4 configuration problems:")
                .hasMessageContaining("Refusing the table name")
                .hasMessageContaining("table [dbo].[Items] is listed twice")
                .hasMessageContaining("retention must be a whole number of minutes, at least one, got null");
    }

    @Test
    void without_tables_only_the_database_is_set_up() {
        ChangeTrackingSetup setup = ChangeTrackingSetup.builder().build();
        assertThat(setup.tables()).isEmpty();
        assertThat(TSqlScript.batches(setup.script())).hasSize(2);
    }

    private static String retention(Duration d) {
        return ChangeTrackingSetup.builder().retention(d).build().retentionText();
    }
}
