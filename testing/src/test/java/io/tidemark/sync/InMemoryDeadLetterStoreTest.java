package io.tidemark.sync;

import io.tidemark.sync.spi.DeadLetterStore;
import io.tidemark.testing.DeadLetterStoreContract;

/** The in-memory store against the dead-letter store contract (here because the contract kit is in tidemark-testing). */
class InMemoryDeadLetterStoreTest extends DeadLetterStoreContract {

    private final DeadLetterStore store = InMemoryDeadLetterStore.create();

    @Override
    protected DeadLetterStore store() {
        return store;
    }
}
