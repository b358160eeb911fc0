package io.tidemark.examples.readme;

import com.microsoft.sqlserver.jdbc.SQLServerDataSource;
import io.tidemark.sqlserver.ChangeProcedureGenerator;
import io.tidemark.sqlserver.ChangeTrackingSetup;
import io.tidemark.sqlserver.LeastPrivilegeRole;
import io.tidemark.sqlserver.SqlServerProvider;
import io.tidemark.sqlserver.WatermarkQuery;
import org.junit.jupiter.api.Test;

import javax.sql.DataSource;
import java.time.Duration;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * provider-mssql/README.md: the snippets that generate scripts and configure the provider, run as written. None of
 * them connects, so they run in every build, Docker or not (ReadmeSnippetsTest checks they are verbatim).
 */
class SqlServerReadmeScriptsTest {

    @Test
    void the_generator_snippets_produce_the_scripts_they_describe() {
        {
            // tag::ms-setup[]
            String sql = ChangeTrackingSetup.builder()
                    .retention(Duration.ofDays(7))      // the default
                    .table("dbo.Items")                 // TRACK_COLUMNS_UPDATED = ON
                    .table("dbo.Orders", false)         // without column tracking
                    .build()
                    .script();
            // end::ms-setup[]
            assertThat(sql).contains("CHANGE_RETENTION = 7 DAYS").contains("dbo").contains("Orders");
        }
        // tag::ms-generator[]
        ChangeProcedureGenerator generator = ChangeProcedureGenerator.forTable("dbo.Items")
                .keyColumns("ItemCode")                      // the primary key, in key order
                .columns("Description", "Assortment")         // what to send, in this order
                .procedure("dbo.get_item_changes")            // default: dbo.Items_changes
                .level(ChangeProcedureGenerator.Level.COLUMN) // or TABLE, the default
                .build();
        // end::ms-generator[]
        assertThat(generator.script()).contains("get_item_changes").contains("CHANGE_TRACKING_IS_COLUMN_IN_MASK");
        {
            // tag::ms-role[]
            String sql = LeastPrivilegeRole.named("tidemark_reader")
                    .grantsFor(generator)            // EXECUTE on the procedure, VIEW CHANGE TRACKING on its table
                    .storeSchema("tidemark")         // SELECT, INSERT, UPDATE, DELETE on the watermark store's schema
                    .member("tidemark_app")          // the database user Tidemark connects as
                    .build()
                    .script();
            // end::ms-role[]
            assertThat(sql).contains("tidemark_reader").contains("EXECUTE").contains("VIEW CHANGE TRACKING");
        }
    }

    @Test
    void the_provider_snippet_builds_without_connecting() {
        DataSource dataSource = new SQLServerDataSource();   // never connected: building a provider runs no SQL

        // tag::ms-provider[]
        SqlServerProvider provider = SqlServerProvider.builder(dataSource)
                .commandTimeout(Duration.ofSeconds(300))           // the default
                .watermarkQuery(WatermarkQuery.changeTracking())   // the default, see below
                .watermarkQuery("Orders", WatermarkQuery.rowversion())
                .agedOutCheck(true)                                // the default, see Diagnostics
                .build();
        // end::ms-provider[]
        assertThat(provider.name()).isEqualTo("sqlserver");
    }
}
