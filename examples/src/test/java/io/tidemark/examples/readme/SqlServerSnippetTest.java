package io.tidemark.examples.readme;

import io.tidemark.sqlserver.ChangeProcedureGenerator;
import io.tidemark.sqlserver.ChangeTrackingSetup;
import io.tidemark.sqlserver.LeastPrivilegeRole;
import io.tidemark.sqlserver.SqlServerProvider;
import io.tidemark.sync.InitialSync;
import io.tidemark.sync.JdbcWatermarkStore;
import io.tidemark.sync.Outcome;
import io.tidemark.sync.SyncEngine;
import io.tidemark.sync.TrackedObject;
import io.tidemark.testing.SqlServerContainerTest;
import io.tidemark.testing.SqlServerDatabase;
import org.junit.jupiter.api.Test;

import javax.sql.DataSource;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * README.md, "SQL Server": the snippet run as written against a SQL Server container. Compiled in every build; run
 * only where Docker is available (skipped with its reason otherwise). ReadmeSnippetsTest checks the README holds it.
 */
@SqlServerContainerTest
class SqlServerSnippetTest {

    @Test
    void the_sql_server_snippet_sets_up_a_table_and_passes_preflight(SqlServerDatabase database) {
        database.execute("CREATE TABLE dbo.Items (ItemCode nvarchar(20) NOT NULL PRIMARY KEY,"
                + " Description nvarchar(200) NULL, Assortment nvarchar(50) NULL)");
        DataSource adminDataSource = database.dataSource();
        DataSource appDataSource = database.createLogin("tidemark_app");

        // tag::sqlserver[]
        ChangeProcedureGenerator items = ChangeProcedureGenerator.forTable("dbo.Items")
                .keyColumns("ItemCode").columns("Description", "Assortment")
                .level(ChangeProcedureGenerator.Level.COLUMN).build();                       // or Level.TABLE
        ChangeTrackingSetup.builder().table("dbo.Items").build().install(adminDataSource);    // or .script()
        items.install(adminDataSource);                                                         // or items.script()
        LeastPrivilegeRole.named("tidemark_reader").grantsFor(items).member("tidemark_app").build().install(adminDataSource);

        SqlServerProvider provider = SqlServerProvider.create(appDataSource);
        TrackedObject tracked = items.trackedObject("Items").initialSync(InitialSync.INCREMENTAL);
        provider.preflight(tracked).throwIfFailed();   // Change Tracking on database and table, retention, snapshot
                                                       // isolation, the procedure and its @Json NVARCHAR(MAX), permissions
        // end::sqlserver[]
        // throwIfFailed() above throws on any failed preflight check; the procedure is also called once, for real.
        try (SyncEngine engine = SyncEngine.builder().provider(provider)
                .watermarks(JdbcWatermarkStore.create(adminDataSource))
                .track(tracked).destination("none", batch -> { }).build()) {
            assertThat(engine.runOnce().get("Items").outcome()).isEqualTo(Outcome.SEEDED);
        }
    }
}
