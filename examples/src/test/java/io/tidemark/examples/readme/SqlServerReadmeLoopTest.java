package io.tidemark.examples.readme;

import io.tidemark.sqlserver.ChangeProcedureGenerator;
import io.tidemark.sqlserver.ChangeTrackingSetup;
import io.tidemark.sqlserver.LeastPrivilegeRole;
import io.tidemark.sqlserver.SqlServerProvider;
import io.tidemark.sync.ChangeBatch;
import io.tidemark.sync.InitialSync;
import io.tidemark.sync.JdbcWatermarkStore;
import io.tidemark.sync.Outcome;
import io.tidemark.sync.SyncEngine;
import io.tidemark.sync.TrackedObject;
import io.tidemark.sync.spi.WatermarkStore;
import io.tidemark.testing.SqlServerContainerTest;
import io.tidemark.testing.SqlServerDatabase;
import org.junit.jupiter.api.Test;

import javax.sql.DataSource;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * provider-mssql/README.md, "In ten lines", run as written against a SQL Server container. Compiled in every build;
 * run where Docker is available, skipped with its reason otherwise (ReadmeSnippetsTest checks it is verbatim).
 */
@SqlServerContainerTest
class SqlServerReadmeLoopTest {

    @Test
    void the_ten_lines_set_up_a_table_and_seed_it(SqlServerDatabase database) {
        database.execute("CREATE TABLE dbo.Items (ItemCode nvarchar(20) NOT NULL PRIMARY KEY,"
                + " Description nvarchar(200) NULL, Assortment nvarchar(50) NULL)");
        DataSource adminDataSource = database.dataSource();
        DataSource appDataSource = database.createLogin("tidemark_app");
        JdbcWatermarkStore.create(adminDataSource).load("Items");   // the DBA's part: the store's tables exist

        // tag::ms-ten-lines[]
        ChangeProcedureGenerator items = ChangeProcedureGenerator.forTable("dbo.Items")
                .keyColumns("ItemCode").columns("Description", "Assortment")
                .level(ChangeProcedureGenerator.Level.COLUMN).build();
        ChangeTrackingSetup.builder().table("dbo.Items").build().install(adminDataSource);   // or .script() for a DBA
        items.install(adminDataSource);                                                        // or items.script()
        LeastPrivilegeRole.named("tidemark_reader").grantsFor(items).storeSchema("tidemark").member("tidemark_app")
                .build().install(adminDataSource);

        SqlServerProvider provider = SqlServerProvider.create(appDataSource);
        TrackedObject tracked = items.trackedObject("Items").initialSync(InitialSync.INCREMENTAL);
        provider.preflight(tracked).throwIfFailed();                                           // fails fast, says what to fix
        WatermarkStore store = JdbcWatermarkStore.builder(appDataSource).createTables(false).build(); // DBA ran its script()
        SyncEngine engine = SyncEngine.builder().provider(provider).watermarks(store)
                .track(tracked).destination("audit", batch -> handle(batch)).build();
        // end::ms-ten-lines[]
        try (engine) {
            assertThat(engine.runOnce().get("Items").outcome()).isEqualTo(Outcome.SEEDED);
        }
    }

    private void handle(ChangeBatch batch) {
        // the README's destination; the seed delivers nothing
    }
}
