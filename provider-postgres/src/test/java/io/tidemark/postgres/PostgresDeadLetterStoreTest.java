package io.tidemark.postgres;

import io.tidemark.sync.JdbcDeadLetterStore;
import io.tidemark.sync.spi.DeadLetterStore;
import io.tidemark.testing.DeadLetterStoreContract;
import io.tidemark.testing.EmbeddedPostgresTest;
import io.tidemark.testing.TestDatabase;

/**
 * Core's {@link JdbcDeadLetterStore} against the dead-letter store contract on a real PostgreSQL; the contract's
 * concurrency tests run on real connections from the pool. It lives here, not in {@code io.tidemark.sync}, so that
 * no package is split across modules.
 */
@EmbeddedPostgresTest
class PostgresDeadLetterStoreTest extends DeadLetterStoreContract {

    private final JdbcDeadLetterStore store;

    PostgresDeadLetterStoreTest(TestDatabase database) {
        this.store = JdbcDeadLetterStore.create(database.dataSource());
    }

    @Override
    protected DeadLetterStore store() {
        return store;
    }
}
