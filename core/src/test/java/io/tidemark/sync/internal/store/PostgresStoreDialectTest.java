package io.tidemark.sync.internal.store;

import io.tidemark.sync.testsupport.Golden;
import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;

/** The PostgreSQL store SQL against a golden file, pinned when its common statements moved to a shared base. */
class PostgresStoreDialectTest {

    @Test
    void generated_sql_matches_the_golden_file() {
        Golden.assertMatches("postgres-store.sql", SqlServerStoreDialectTest.render(
                StoreDialect.forProduct("PostgreSQL", "tidemark", "sync_state", "dead_letters")));
    }
}
