package io.tidemark.sqlserver;

import io.tidemark.sync.JdbcDeadLetterStore;
import io.tidemark.sync.spi.DeadLetterStore;
import io.tidemark.testing.DeadLetterStoreContract;
import io.tidemark.testing.SqlServerContainerTest;
import io.tidemark.testing.SqlServerDatabase;

/**
 * Core's JDBC dead-letter store on SQL Server against the whole dead-letter store contract (claims with
 * {@code READPAST, UPDLOCK, ROWLOCK}, records with {@code UPDLOCK, HOLDLOCK}, on real connections). Skipped where
 * there is no Docker.
 */
@SqlServerContainerTest
class SqlServerDeadLetterStoreContractTest extends DeadLetterStoreContract {

    private final JdbcDeadLetterStore store;

    SqlServerDeadLetterStoreContractTest(SqlServerDatabase database) {
        this.store = JdbcDeadLetterStore.builder(database.dataSource()).schema("letter_contract").build();
    }

    @Override
    protected DeadLetterStore store() {
        return store;
    }
}
