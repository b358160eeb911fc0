package io.tidemark.sqlserver;

import io.tidemark.sqlserver.internal.TSqlScript;
import io.tidemark.sync.ErrorCode;
import io.tidemark.sync.JdbcDeadLetterStore;
import io.tidemark.sync.JdbcWatermarkStore;
import io.tidemark.sync.TidemarkException;
import io.tidemark.sync.ChangeBatch;
import io.tidemark.sync.spi.DeadLetter;
import io.tidemark.testing.DeadLetterStoreContract;
import io.tidemark.sync.spi.WatermarkState;
import io.tidemark.testing.SqlServerContainerTest;
import io.tidemark.testing.SqlServerDatabase;
import org.junit.jupiter.api.Test;

import java.time.Instant;
import java.time.temporal.ChronoUnit;
import java.util.ArrayList;
import java.util.List;
import java.util.OptionalLong;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/**
 * Core's JDBC watermark and dead-letter stores on SQL Server (the SQL Server dialect's SQL is checked without a
 * server in core's {@code SqlServerStoreDialectTest}). Skipped where there is no Docker.
 */
@SqlServerContainerTest
class SqlServerStoreContainerTest {

    private static final Instant T1 = Instant.parse("2025-03-01T10:15:30.123456Z");
    private static final Instant T2 = T1.plus(1, ChronoUnit.MINUTES);
    private static final Instant T3 = T2.plus(1, ChronoUnit.MINUTES);

    private static final String SOURCE = "sqlserver:[dbo].[GetItemChanges]";

    private final SqlServerDatabase database;

    SqlServerStoreContainerTest(SqlServerDatabase database) {
        this.database = database;
    }

    @Test
    void watermarks_move_forward_only_and_with_compare_and_set() {
        JdbcWatermarkStore store = JdbcWatermarkStore.builder(database.dataSource()).schema("cas").build();
        assertThat(store.load("A")).isEmpty();

        store.advance("A", SOURCE, OptionalLong.empty(), 0, T1);
        WatermarkState zero = store.load("A").orElseThrow();
        assertThat(zero.version()).as("a stored 0 is a real watermark").hasValue(0);
        assertThat(zero.lastMovedAt()).contains(T1);
        assertThat(zero.lastPolledAt()).contains(T1);

        assertCode(() -> store.advance("A", SOURCE, OptionalLong.empty(), 5, T2), ErrorCode.WATERMARK_CONFLICT);
        store.advance("A", SOURCE, OptionalLong.of(0), 7, T2);
        store.advance("A", SOURCE, OptionalLong.of(7), 7, T3);
        WatermarkState seven = store.load("A").orElseThrow();
        assertThat(seven.version()).hasValue(7);
        assertThat(seven.lastMovedAt()).as("did not move at T3").contains(T2);
        assertThat(seven.lastPolledAt()).contains(T3);

        assertCode(() -> store.advance("A", SOURCE, OptionalLong.of(7), 3, T3), ErrorCode.WATERMARK_REGRESSION);
        assertCode(() -> store.advance("A", SOURCE, OptionalLong.of(5), 9, T3), ErrorCode.WATERMARK_CONFLICT);
        assertCode(() -> store.advance("A", SOURCE, OptionalLong.of(5), 6, T3), ErrorCode.WATERMARK_REGRESSION);
        assertThat(store.load("A").orElseThrow().version()).hasValue(7);

        store.recordPoll("A", T3, "boom: ünïcödé ✗");
        assertThat(store.load("A").orElseThrow().lastError()).contains("boom: ünïcödé ✗");
        store.advance("A", SOURCE, OptionalLong.of(7), 8, T3);
        assertThat(store.load("A").orElseThrow().lastError()).isEmpty();

        store.setPaused("B", true, T1);
        WatermarkState paused = store.load("B").orElseThrow();
        assertThat(paused.paused()).isTrue();
        assertThat(paused.version()).isEmpty();
        store.recordPoll("C", T2, null);
        assertThat(store.load("C").orElseThrow().lastPolledAt()).contains(T2);

        store.setPaused("A", true, T3);
        store.reset("A", T3);
        WatermarkState reset = store.load("A").orElseThrow();
        assertThat(reset.version()).isEmpty();
        assertThat(reset.paused()).as("reset keeps the pause flag").isTrue();
        store.advance("A", SOURCE, OptionalLong.empty(), 2, T3);
        assertThat(store.load("A").orElseThrow().version()).hasValue(2);
    }

    @Test
    void a_version_is_bound_to_its_source_exactly_whatever_the_database_collation() {
        JdbcWatermarkStore store = JdbcWatermarkStore.builder(database.dataSource()).schema("sources").build();
        store.advance("A", SOURCE, OptionalLong.empty(), 10, T1);
        assertThat(store.load("A").orElseThrow().source()).contains(SOURCE);

        assertCode(() -> store.advance("A", SOURCE.toLowerCase(), OptionalLong.of(10), 11, T2),
                ErrorCode.WATERMARK_SOURCE_CHANGED);
        store.adoptSource("A", "sqlserver:[dbo].[Other]", T2);
        store.advance("A", "sqlserver:[dbo].[Other]", OptionalLong.of(10), 11, T3);
        assertThat(store.load("A").orElseThrow().version()).hasValue(11);
        store.reset("A", T3);
        assertThat(store.load("A").orElseThrow().source()).isEmpty();
    }

    /** A table in the shape written before sources were recorded gains the column; its row adopts a source. */
    @Test
    void an_old_store_table_is_migrated_on_first_use() {
        TSqlScript.run(database.dataSource(), """
                CREATE SCHEMA old_store;
                GO
                CREATE TABLE old_store.sync_state (
                    object_name    NVARCHAR(200) COLLATE Latin1_General_100_BIN2 NOT NULL PRIMARY KEY,
                    version        BIGINT            NULL,
                    paused         BIT               NOT NULL DEFAULT 0,
                    last_moved_at  DATETIMEOFFSET(6) NULL,
                    last_polled_at DATETIMEOFFSET(6) NULL,
                    last_error     NVARCHAR(MAX)     NULL,
                    updated_at     DATETIMEOFFSET(6) NOT NULL DEFAULT SYSDATETIMEOFFSET()
                );
                INSERT INTO old_store.sync_state (object_name, version) VALUES (N'Legacy', 736);
                GO
                """, "the old store table");

        JdbcWatermarkStore store = JdbcWatermarkStore.builder(database.dataSource()).schema("old_store").build();
        JdbcWatermarkStore.builder(database.dataSource()).schema("old_store").build();

        WatermarkState legacy = store.load("Legacy").orElseThrow();
        assertThat(legacy.version()).hasValue(736);
        assertThat(legacy.source()).isEmpty();
        store.advance("Legacy", SOURCE, OptionalLong.of(736), 736, T1);
        assertThat(store.load("Legacy").orElseThrow().source()).contains(SOURCE);
        assertCode(() -> store.advance("Legacy", "sqlserver:[dbo].[Other]", OptionalLong.of(736), 737, T2),
                ErrorCode.WATERMARK_SOURCE_CHANGED);
    }

    @Test
    void names_are_told_apart_exactly_whatever_the_database_collation() {
        JdbcWatermarkStore store = JdbcWatermarkStore.builder(database.dataSource()).schema("names").build();
        store.advance("items", SOURCE, OptionalLong.empty(), 1, T1);
        store.advance("Items", SOURCE, OptionalLong.empty(), 2, T1);
        store.advance("Bestellübersicht 日本", SOURCE, OptionalLong.empty(), 3, T1);
        assertThat(store.load("items").orElseThrow().version()).hasValue(1);
        assertThat(store.load("Items").orElseThrow().version()).hasValue(2);
        assertThat(store.load("Bestellübersicht 日本").orElseThrow().version()).hasValue(3);
        assertThat(store.loadAll().keySet()).containsExactlyInAnyOrder("items", "Items", "Bestellübersicht 日本");
    }

    @Test
    void tables_are_created_once_when_engines_start_together() throws Exception {
        int engines = 8;
        CountDownLatch start = new CountDownLatch(1);
        ExecutorService executor = Executors.newFixedThreadPool(engines);
        try {
            List<Future<JdbcWatermarkStore>> stores = new ArrayList<>();
            for (int i = 0; i < engines; i++) {
                stores.add(executor.submit(() -> {
                    start.await();
                    return JdbcWatermarkStore.builder(database.dataSource()).schema("race").build();
                }));
            }
            start.countDown();
            for (Future<JdbcWatermarkStore> store : stores) {
                assertThat(store.get(60, TimeUnit.SECONDS)).isNotNull();
            }
        } finally {
            executor.shutdownNow();
        }
        assertThat(ItemsTable.scalar(database.dataSource(), "SELECT COUNT(*) FROM sys.tables"
                + " WHERE schema_id = SCHEMA_ID(N'race')")).isEqualTo(2);
    }

    @Test
    void dead_letters_keep_their_envelope_in_nvarchar_and_refuse_a_destination_name_the_index_cannot_hold() {
        JdbcDeadLetterStore letters = JdbcDeadLetterStore.builder(database.dataSource()).schema("letters").build();
        ChangeBatch batch = DeadLetterStoreContract.page("Items", 4, 5, 1, 1);
        DeadLetter first = letters.record(DeadLetter.of(batch, "audit", new IllegalStateException("refused: ✗"), T1));
        assertThat(letters.find(first.id()).orElseThrow().envelope()).contains("\"Name\":\"ü ✓\"");
        assertThat(letters.find(first.id()).orElseThrow().lastError()).endsWith("refused: ✗");
        assertCode(() -> letters.record(DeadLetter.of(batch, "d".repeat(201), new IllegalStateException("x"), T1)),
                ErrorCode.STORE_FAILED);
    }

    @Test
    void the_script_creates_what_the_store_expects_and_can_run_again() {
        JdbcWatermarkStore scriptOnly = JdbcWatermarkStore.builder(database.dataSource()).schema("scripted")
                .createTables(false).build();
        String script = scriptOnly.script();
        TSqlScript.run(database.dataSource(), script, "the store script");
        TSqlScript.run(database.dataSource(), script, "the store script, again");
        scriptOnly.advance("A", SOURCE, OptionalLong.empty(), 1, T1);
        assertThat(scriptOnly.load("A").orElseThrow().version()).hasValue(1);
    }


    private static void assertCode(org.assertj.core.api.ThrowableAssert.ThrowingCallable call, ErrorCode code) {
        assertThatThrownBy(call).isInstanceOf(TidemarkException.class)
                .satisfies(e -> assertThat(((TidemarkException) e).code()).as(e.getMessage()).isEqualTo(code));
    }
}
