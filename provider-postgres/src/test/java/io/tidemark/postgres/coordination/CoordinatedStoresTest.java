package io.tidemark.postgres.coordination;

import io.tidemark.postgres.PostgresProvider;
import io.tidemark.sync.Coordination;
import io.tidemark.sync.ErrorCode;
import io.tidemark.sync.JdbcDeadLetterStore;
import io.tidemark.sync.JdbcWatermarkStore;
import io.tidemark.sync.SyncEngine;
import io.tidemark.sync.TidemarkException;
import io.tidemark.sync.TrackedObject;
import io.tidemark.testing.EmbeddedPostgresTest;
import io.tidemark.testing.TestDatabase;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.postgresql.ds.PGSimpleDataSource;

import javax.sql.DataSource;
import java.time.Duration;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/**
 * Coordination fences the dead letters against the lease table next to the watermarks, in the dead-letter write's
 * own transaction: so the dead-letter store must be in the same database, not merely use the same table names.
 */
@EmbeddedPostgresTest
class CoordinatedStoresTest {

    private static final String OTHER = "coordinated_stores_other";

    private final TestDatabase database;
    private final DataSource ds;

    CoordinatedStoresTest(TestDatabase database) throws Exception {
        this.database = database;
        this.ds = database.dataSource();
        StreamFixture.installOnce(ds, 1);
        database.execute("DROP DATABASE IF EXISTS " + OTHER + " WITH (FORCE)");
        database.execute("CREATE DATABASE " + OTHER);
    }

    @AfterEach
    void dropOther() {
        database.execute("DROP DATABASE IF EXISTS " + OTHER + " WITH (FORCE)");
    }

    private SyncEngine.Builder engine(JdbcDeadLetterStore letters) {
        return SyncEngine.builder()
                .name("a")
                .provider(PostgresProvider.create(ds))
                .watermarks(JdbcWatermarkStore.create(ds))
                .deadLetters(letters)
                .track(TrackedObject.of("stream_01", "public.stream_01"))
                .destination("d1", batch -> { })
                .coordination(Coordination.builder().instanceId("a").leaseDuration(Duration.ofSeconds(3)).build());
    }

    @Test
    void a_dead_letter_store_in_another_database_with_the_same_table_names_is_refused() {
        PGSimpleDataSource other = new PGSimpleDataSource();
        other.setUrl(database.jdbcUrl().replace("/" + database.name() + "?", "/" + OTHER + "?"));
        JdbcDeadLetterStore elsewhere = JdbcDeadLetterStore.create(other);

        assertThatThrownBy(() -> engine(elsewhere).build())
                .isInstanceOfSatisfying(TidemarkException.class, e -> {
                    assertThat(e.code()).isEqualTo(ErrorCode.INVALID_CONFIGURATION);
                    assertThat(e.getMessage()).contains("dead-letter store in the same database")
                            .contains(database.name()).contains(OTHER);
                });
    }

    @Test
    void a_dead_letter_store_in_the_same_database_is_accepted() {
        try (SyncEngine engine = engine(JdbcDeadLetterStore.create(ds)).build()) {
            assertThat(engine.check().problems()).isEmpty();
        }
    }
}
