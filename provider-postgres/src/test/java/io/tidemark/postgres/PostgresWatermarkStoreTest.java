package io.tidemark.postgres;

import io.tidemark.sync.JdbcDeadLetterStore;
import io.tidemark.sync.ErrorCode;
import io.tidemark.sync.JdbcWatermarkStore;
import io.tidemark.sync.TidemarkException;
import io.tidemark.sync.spi.PositionAdvance;
import io.tidemark.sync.spi.WatermarkStore;
import io.tidemark.testing.EmbeddedPostgresTest;
import io.tidemark.testing.TestDatabase;
import io.tidemark.testing.WatermarkStoreContract;
import org.junit.jupiter.api.Test;

import javax.sql.DataSource;
import java.time.Instant;
import java.util.List;
import java.util.OptionalLong;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/**
 * Core's {@link JdbcWatermarkStore} against the store contract on a real PostgreSQL, plus what only a database
 * store has. It lives here, not in {@code io.tidemark.sync}, so that no package is split across modules.
 */
@EmbeddedPostgresTest
class PostgresWatermarkStoreTest extends WatermarkStoreContract {

    private final TestDatabase database;
    private final JdbcWatermarkStore store;

    PostgresWatermarkStoreTest(TestDatabase database) {
        this.database = database;
        this.store = JdbcWatermarkStore.create(database.dataSource());
    }

    @Override
    protected WatermarkStore store() {
        return store;
    }

    @Test
    void creates_its_tables_in_the_tidemark_schema_by_default_and_is_idempotent() {
        JdbcWatermarkStore.create(database.dataSource());
        database.execute("DO $$ BEGIN\n"
                + "  ASSERT to_regclass('tidemark.sync_state') IS NOT NULL, 'state table missing';\n"
                + "  ASSERT to_regclass('tidemark.dead_letters') IS NOT NULL, 'dead-letter table missing';\n"
                + "  ASSERT to_regclass('tidemark.sync_state_positions') IS NOT NULL, 'positions table missing';\n"
                + "END $$;");
    }

    @Test
    void a_configured_schema_and_table_are_used_and_quoted() {
        JdbcWatermarkStore custom = JdbcWatermarkStore.builder(database.dataSource()).schema("Ops Data").table("marks").build();
        custom.advance("x", "test:fn", OptionalLong.empty(), 5, Instant.parse("2026-01-01T00:00:00Z"));

        database.execute("DO $$ BEGIN ASSERT (SELECT version FROM \"Ops Data\".marks WHERE object_name = 'x') = 5; END $$;");
        assertThat(custom.script()).contains("CREATE SCHEMA IF NOT EXISTS \"Ops Data\";")
                .contains("CREATE TABLE IF NOT EXISTS \"Ops Data\".\"marks\"");
        assertThat(store.load("x")).isEmpty();
    }

    @Test
    void an_application_role_without_create_rights_uses_tables_a_dba_created_from_the_script() {
        JdbcWatermarkStore dba = JdbcWatermarkStore.builder(database.dataSource()).schema("ops_app").build();
        database.execute("GRANT USAGE ON SCHEMA ops_app TO PUBLIC;"
                + "GRANT SELECT, INSERT, UPDATE ON ops_app.sync_state, ops_app.sync_state_positions TO PUBLIC;");
        DataSource app = database.createRole("store_app");

        JdbcWatermarkStore appStore = JdbcWatermarkStore.builder(app).schema("ops_app").build();
        appStore.advance("y", "test:fn", OptionalLong.empty(), 9,
                List.of(new PositionAdvance("out", OptionalLong.empty(), 9)), Instant.parse("2026-01-01T00:00:00Z"));
        appStore.setDestinationPaused("y", "out", true, Instant.parse("2026-01-01T00:00:00Z"));

        assertThat(dba.load("y").orElseThrow().version()).hasValue(9);
        assertThat(appStore.load("y").orElseThrow().positions().get("out").paused()).isTrue();
    }

    @Test
    void missing_tables_without_create_rights_give_an_error_that_points_to_the_script() {
        DataSource app = database.createRole("store_app_2");
        assertThatThrownBy(() -> JdbcWatermarkStore.builder(app).schema("not_created_yet").build())
                .isInstanceOf(TidemarkException.class)
                .hasMessageContaining("not_created_yet")
                .hasMessageContaining("script()")
                .satisfies(e -> assertThat(((TidemarkException) e).code()).isEqualTo(ErrorCode.STORE_FAILED));
    }

    @Test
    void names_are_validated_before_anything_runs() {
        assertThatThrownBy(() -> JdbcWatermarkStore.builder(database.dataSource()).table("x".repeat(64)).build())
                .isInstanceOf(TidemarkException.class)
                .satisfies(e -> assertThat(((TidemarkException) e).code()).isEqualTo(ErrorCode.INVALID_CONFIGURATION));
    }

    /** Setters only store: build() reports every bad value at once, nulls included. */
    @Test
    void every_problem_is_reported_by_build() {
        assertThatThrownBy(() -> JdbcWatermarkStore.builder(null).schema(null).table(null).deadLetterTable(null).build())
                .satisfies(e -> assertThat(((TidemarkException) e).code()).isEqualTo(ErrorCode.INVALID_CONFIGURATION))
                .hasMessage("JdbcWatermarkStore has 4 configuration problems:\n  - dataSource must not be null\n"
                        + "  - schema must not be null\n  - table must not be null\n"
                        + "  - deadLetterTable must not be null");
        assertThatThrownBy(() -> JdbcDeadLetterStore.builder(database.dataSource()).schema("s".repeat(64))
                .table("x".repeat(64)).stateTable("ok").build())
                .satisfies(e -> assertThat(((TidemarkException) e).code()).isEqualTo(ErrorCode.INVALID_CONFIGURATION))
                .hasMessageStartingWith("JdbcDeadLetterStore has 2 configuration problems:")
                .hasMessageContaining("The schema name \"" + "s".repeat(64) + "\" is 64 bytes long")
                .hasMessageContaining("The table name \"" + "x".repeat(64) + "\" is 64 bytes long");
    }
}
