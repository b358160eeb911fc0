package io.tidemark.sync;

import io.tidemark.sync.spi.WatermarkStore;
import io.tidemark.testing.WatermarkStoreContract;

/** The in-memory store against the store contract (lives here because the contract kit is in tidemark-testing). */
class InMemoryWatermarkStoreTest extends WatermarkStoreContract {

    private final WatermarkStore store = InMemoryWatermarkStore.create();

    @Override
    protected WatermarkStore store() {
        return store;
    }
}
