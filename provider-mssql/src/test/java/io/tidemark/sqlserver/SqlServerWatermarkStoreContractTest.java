package io.tidemark.sqlserver;

import io.tidemark.sync.JdbcWatermarkStore;
import io.tidemark.sync.spi.WatermarkStore;
import io.tidemark.testing.SqlServerContainerTest;
import io.tidemark.testing.SqlServerDatabase;
import io.tidemark.testing.WatermarkStoreContract;

/** Core's JDBC watermark store on SQL Server against the whole store contract. Skipped where there is no Docker. */
@SqlServerContainerTest
class SqlServerWatermarkStoreContractTest extends WatermarkStoreContract {

    private final JdbcWatermarkStore store;

    SqlServerWatermarkStoreContractTest(SqlServerDatabase database) {
        this.store = JdbcWatermarkStore.builder(database.dataSource()).schema("contract").build();
    }

    @Override
    protected WatermarkStore store() {
        return store;
    }
}
