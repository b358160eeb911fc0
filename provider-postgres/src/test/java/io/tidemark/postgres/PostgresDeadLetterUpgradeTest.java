package io.tidemark.postgres;

import io.tidemark.sync.ChangeBatch;
import io.tidemark.sync.CheckReport;
import io.tidemark.sync.ErrorCode;
import io.tidemark.sync.JdbcDeadLetterStore;
import io.tidemark.sync.JdbcWatermarkStore;
import io.tidemark.sync.SyncEngine;
import io.tidemark.sync.SyncType;
import io.tidemark.sync.TidemarkException;
import io.tidemark.sync.TrackedObject;
import io.tidemark.sync.spi.DeadLetter;
import io.tidemark.testing.EmbeddedPostgresTest;
import io.tidemark.testing.TestDatabase;
import org.junit.jupiter.api.Test;

import java.time.Instant;
import java.util.ArrayList;
import java.util.List;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/**
 * A dead-letter table created by an earlier Tidemark (one row per refusal, the page's changes as a JSON array,
 * no idempotency key) is upgraded in place, its letters kept, or, where the store may not change tables, every use
 * names the call that upgrades it.
 */
@EmbeddedPostgresTest
class PostgresDeadLetterUpgradeTest {

    private static final Instant T1 = Instant.parse("2025-05-01T10:00:00.123456Z");
    private static final Instant T2 = T1.plusSeconds(3600);
    private static final String CHANGES = "[{\"$operation\" : \"I\", \"$version\" : 3, \"Id\" : 1, \"Name\" : \"ü\"}]";

    private final TestDatabase database;

    PostgresDeadLetterUpgradeTest(TestDatabase database) {
        this.database = database;
    }

    /** The table as the earlier store created it, with three refusals: two of them the same page. */
    private void earlierTable(String schema) {
        database.execute("CREATE SCHEMA " + schema + ";\n"
                + "CREATE TABLE " + schema + ".dead_letters (\n"
                + "    id           bigint      GENERATED ALWAYS AS IDENTITY PRIMARY KEY,\n"
                + "    object_name  text        NOT NULL,\n"
                + "    destination  text        NOT NULL,\n"
                + "    batch_id     text        NOT NULL,\n"
                + "    page_number  integer     NOT NULL,\n"
                + "    from_version bigint      NOT NULL,\n"
                + "    to_version   bigint      NOT NULL,\n"
                + "    sync_type    text        NOT NULL,\n"
                + "    reason_code  integer     NOT NULL,\n"
                + "    change_count integer     NOT NULL,\n"
                + "    changes      json        NOT NULL,\n"
                + "    error        text        NOT NULL,\n"
                + "    created_at   timestamptz NOT NULL\n"
                + ");\n"
                + "CREATE INDEX dead_letters_object_idx ON " + schema + ".dead_letters (object_name, id);\n"
                + "INSERT INTO " + schema + ".dead_letters (object_name, destination, batch_id, page_number,"
                + " from_version, to_version, sync_type, reason_code, change_count, changes, error, created_at) VALUES\n"
                + " ('Items', 'audit', 'Items:0-10', 1, 0, 10, 'DIFF', 0, 1, '" + CHANGES + "', 'first', '" + T1 + "'),\n"
                + " ('Items', 'audit', 'Items:0-10', 1, 0, 10, 'DIFF', 0, 1, '" + CHANGES + "', 'second', '" + T2 + "'),\n"
                + " ('Items', 'search', 'Items:0-10', 2, 0, 10, 'FULL', 1, 1, '[]', 'third', '" + T1 + "');");
    }

    private static String keyOf(int page) {
        return new ChangeBatch("Items", 0, 10, SyncType.DIFF, 0, List.of(), page, 0, 0).idempotencyKey();
    }

    @Test
    void an_earlier_table_is_upgraded_when_the_store_is_built_and_its_letters_are_kept() {
        earlierTable("legacy_auto");
        JdbcDeadLetterStore store = JdbcDeadLetterStore.builder(database.dataSource()).schema("legacy_auto").build();

        List<DeadLetter> audit = store.list("Items", "audit");
        assertThat(audit).singleElement().satisfies(letter -> {
            assertThat(letter.idempotencyKey()).isEqualTo(keyOf(1));
            assertThat(letter.pageCount()).isZero();
            assertThat(letter.attempts()).as("the same page refused twice is one letter").isEqualTo(2);
            assertThat(letter.failures()).containsExactly(new DeadLetter.Failure(T1, "first"),
                    new DeadLetter.Failure(T2, "second"));
            assertThat(letter.firstFailedAt()).isEqualTo(T1);
            assertThat(letter.lastFailedAt()).isEqualTo(T2);
            assertThat(letter.envelope()).startsWith("{\"object\":\"Items\",\"idempotencyKey\":\"" + keyOf(1) + "\"")
                    .endsWith("\"changes\":" + CHANGES + "}");
        });
        assertThat(store.list("Items", "search")).singleElement().satisfies(letter -> {
            assertThat(letter.syncType()).isEqualTo(SyncType.FULL);
            assertThat(letter.reasonCode()).isEqualTo(1);
            assertThat(letter.attempts()).isEqualTo(1);
        });
        database.execute("DO $$ BEGIN ASSERT NOT EXISTS (SELECT 1 FROM information_schema.columns"
                + " WHERE table_schema = 'legacy_auto' AND table_name = 'dead_letters'"
                + " AND column_name IN ('changes', 'error', 'created_at')), 'old columns left'; END $$;");

        // Upgraded letters behave like new ones: the same page again updates its letter ...
        ChangeBatch page = new ChangeBatch("Items", 0, 10, SyncType.DIFF, 0, List.of(), 1, 0, 0);
        assertThat(store.record(DeadLetter.of(page, "audit", new IllegalStateException("third"), T2)).attempts())
                .isEqualTo(3);
        // ... and a replay sends the page as it was stored, under the same key.
        List<ChangeBatch> received = new ArrayList<>();
        try (SyncEngine engine = SyncEngine.builder()
                .provider(PostgresProvider.create(database.dataSource()))
                .watermarks(JdbcWatermarkStore.builder(database.dataSource()).schema("legacy_auto").build())
                .deadLetters(store)
                .track(TrackedObject.of("Items", "public.unused_changes"))
                .destination("audit", received::add)
                .destination("search", batch -> { })
                .build()) {
            assertThat(engine.deadLetters().replayAll("Items", "audit").delivered()).isEqualTo(1);
        }
        assertThat(received).singleElement().satisfies(batch -> {
            assertThat(batch.idempotencyKey()).isEqualTo(keyOf(1));
            assertThat(batch.changes()).singleElement().satisfies(change -> {
                assertThat(change.rawJson()).isEqualTo(CHANGES.substring(1, CHANGES.length() - 1));
                assertThat(change.version()).hasValue(3);
            });
        });

        // Building again finds nothing to do.
        JdbcDeadLetterStore.builder(database.dataSource()).schema("legacy_auto").build();
        assertThat(store.list("Items")).hasSize(1);
    }

    @Test
    void without_create_tables_every_use_of_an_earlier_table_names_the_call_that_upgrades_it() {
        earlierTable("legacy_manual");
        JdbcDeadLetterStore store = JdbcDeadLetterStore.builder(database.dataSource()).schema("legacy_manual")
                .createTables(false).build();

        assertThatThrownBy(() -> store.list("Items"))
                .isInstanceOfSatisfying(TidemarkException.class,
                        e -> assertThat(e.code()).isEqualTo(ErrorCode.STORE_FAILED))
                .hasMessageContaining("has the layout of an earlier Tidemark")
                .hasMessageContaining("JdbcDeadLetterStore.upgrade()");
        List<CheckReport.Problem> problems = store.check();
        assertThat(problems).singleElement().satisfies(p -> {
            assertThat(p.code()).isEqualTo(ErrorCode.STORE_FAILED);
            assertThat(p.message()).contains("JdbcDeadLetterStore.upgrade()");
        });
        assertThatThrownBy(() -> database.execute(store.script()))
                .hasMessageContaining("has the layout of an earlier Tidemark: upgrade it with"
                        + " JdbcDeadLetterStore.upgrade()");

        store.upgrade();

        assertThat(store.list("Items")).hasSize(2);
        assertThat(store.check()).isEmpty();
        database.execute(store.script());
    }
}
