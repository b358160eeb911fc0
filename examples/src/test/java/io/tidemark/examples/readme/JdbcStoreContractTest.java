package io.tidemark.examples.readme;

// tag::contract[]
import io.tidemark.sync.JdbcWatermarkStore;
import io.tidemark.sync.spi.WatermarkStore;
import io.tidemark.testing.EmbeddedPostgresTest;
import io.tidemark.testing.WatermarkStoreContract;

import javax.sql.DataSource;

@EmbeddedPostgresTest
class JdbcStoreContractTest extends WatermarkStoreContract {      // every rule a store must keep, as @Test methods

    private final WatermarkStore store;

    JdbcStoreContractTest(DataSource dataSource) {
        this.store = JdbcWatermarkStore.create(dataSource);        // your store here
    }

    @Override
    protected WatermarkStore store() {
        return store;
    }
}
// end::contract[]
