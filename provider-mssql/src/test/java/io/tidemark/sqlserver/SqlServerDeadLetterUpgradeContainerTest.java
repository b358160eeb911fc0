package io.tidemark.sqlserver;

import io.tidemark.sqlserver.internal.TSqlScript;
import io.tidemark.sync.ChangeBatch;
import io.tidemark.sync.ErrorCode;
import io.tidemark.sync.JdbcDeadLetterStore;
import io.tidemark.sync.SyncType;
import io.tidemark.sync.TidemarkException;
import io.tidemark.sync.spi.DeadLetter;
import io.tidemark.testing.SqlServerContainerTest;
import io.tidemark.testing.SqlServerDatabase;
import org.junit.jupiter.api.Test;

import java.time.Instant;
import java.util.List;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/**
 * A dead-letter table created by an earlier Tidemark on SQL Server (destination NVARCHAR(MAX), the changes column
 * with an unnamed ISJSON check) is upgraded in place, or names the call that upgrades it. The upgrade's SQL is pinned
 * without a server in core's {@code DeadLetterDialectTest}. Skipped where there is no Docker.
 */
@SqlServerContainerTest
class SqlServerDeadLetterUpgradeContainerTest {

    private static final Instant T1 = Instant.parse("2025-05-01T10:00:00.123456Z");
    private static final Instant T2 = T1.plusSeconds(3600);

    private final SqlServerDatabase database;

    SqlServerDeadLetterUpgradeContainerTest(SqlServerDatabase database) {
        this.database = database;
    }

    private void earlierTable(String schema) {
        database.execute("CREATE SCHEMA " + schema);
        database.execute("CREATE TABLE " + schema + ".dead_letters (\n"
                + "    id           BIGINT IDENTITY(1, 1) NOT NULL PRIMARY KEY,\n"
                + "    object_name  NVARCHAR(200) COLLATE Latin1_General_100_BIN2 NOT NULL,\n"
                + "    destination  NVARCHAR(MAX)     NOT NULL,\n"
                + "    batch_id     NVARCHAR(MAX)     NOT NULL,\n"
                + "    page_number  INT               NOT NULL,\n"
                + "    from_version BIGINT            NOT NULL,\n"
                + "    to_version   BIGINT            NOT NULL,\n"
                + "    sync_type    NVARCHAR(10)      NOT NULL,\n"
                + "    reason_code  INT               NOT NULL,\n"
                + "    change_count INT               NOT NULL,\n"
                + "    changes      NVARCHAR(MAX)     NOT NULL CHECK (ISJSON(changes) = 1),\n"
                + "    error        NVARCHAR(MAX)     NOT NULL,\n"
                + "    created_at   DATETIMEOFFSET(6) NOT NULL\n"
                + ");\n"
                + "CREATE INDEX [dead_letters_object_idx] ON " + schema + ".dead_letters (object_name, id);\n"
                + "INSERT INTO " + schema + ".dead_letters (object_name, destination, batch_id, page_number,"
                + " from_version, to_version, sync_type, reason_code, change_count, changes, error, created_at) VALUES\n"
                + " (N'Items', N'audit', N'Items:0-10', 1, 0, 10, N'DIFF', 0, 1, N'[{\"$version\":3,\"Id\":\"ü\"}]',"
                + " N'first', '" + T1 + "'),\n"
                + " (N'Items', N'audit', N'Items:0-10', 1, 0, 10, N'DIFF', 0, 1, N'[{\"$version\":3,\"Id\":\"ü\"}]',"
                + " N'second', '" + T2 + "');");
    }

    @Test
    void an_earlier_table_is_upgraded_and_its_letters_kept() {
        earlierTable("legacy_auto");
        JdbcDeadLetterStore store = JdbcDeadLetterStore.builder(database.dataSource()).schema("legacy_auto").build();

        String key = new ChangeBatch("Items", 0, 10, SyncType.DIFF, 0, List.of(), 1, 0, 0).idempotencyKey();
        assertThat(store.list("Items")).singleElement().satisfies(letter -> {
            assertThat(letter.idempotencyKey()).isEqualTo(key);
            assertThat(letter.attempts()).isEqualTo(2);
            assertThat(letter.failures()).extracting(DeadLetter.Failure::error).containsExactly("first", "second");
            assertThat(letter.envelope()).endsWith("\"changes\":[{\"$version\":3,\"Id\":\"ü\"}]}");
        });
        assertThat(ItemsTable.scalar(database.dataSource(), "SELECT COUNT(*) FROM sys.columns WHERE object_id ="
                + " OBJECT_ID(N'legacy_auto.dead_letters') AND name IN (N'changes', N'error', N'created_at')"))
                .isZero();
        JdbcDeadLetterStore.builder(database.dataSource()).schema("legacy_auto").build();
        assertThat(store.list("Items")).hasSize(1);
    }

    @Test
    void without_create_tables_an_earlier_table_names_the_call_that_upgrades_it() {
        earlierTable("legacy_manual");
        JdbcDeadLetterStore store = JdbcDeadLetterStore.builder(database.dataSource()).schema("legacy_manual")
                .createTables(false).build();

        assertThatThrownBy(() -> store.list("Items"))
                .isInstanceOfSatisfying(TidemarkException.class,
                        e -> assertThat(e.code()).isEqualTo(ErrorCode.STORE_FAILED))
                .hasMessageContaining("JdbcDeadLetterStore.upgrade()");
        assertThatThrownBy(() -> TSqlScript.run(database.dataSource(), store.script(), "the store script"))
                .hasMessageContaining("upgrade it with JdbcDeadLetterStore.upgrade()");

        store.upgrade();
        assertThat(store.list("Items")).hasSize(1);
        TSqlScript.run(database.dataSource(), store.script(), "the store script after the upgrade");
    }
}
