package io.tidemark.examples.readme;

import io.tidemark.postgres.PostgresOutbox;
import io.tidemark.postgres.PostgresProvider;
import io.tidemark.sync.ChangeBatch;
import io.tidemark.sync.InitialSync;
import io.tidemark.sync.JdbcWatermarkStore;
import io.tidemark.sync.SyncEngine;
import io.tidemark.testing.EmbeddedPostgresTest;
import io.tidemark.testing.ProcedureContractVerifier;
import io.tidemark.testing.RecordingDestination;
import io.tidemark.testing.TestDatabase;
import org.junit.jupiter.api.Test;

import javax.sql.DataSource;
import java.time.Duration;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * README.md, "Capturing changes on PostgreSQL": the outbox snippet and the verifier snippet, run as written.
 * ReadmeSnippetsTest checks that the README holds the tagged regions verbatim.
 */
@EmbeddedPostgresTest
class OutboxSnippetTest {

    private final RecordingDestination recorder = new RecordingDestination();

    @Test
    void the_outbox_snippet_delivers_and_the_verifier_snippet_finds_the_generated_function_safe(
            DataSource dataSource, TestDatabase database) throws Exception {
        database.execute("CREATE TABLE public.items (item_code text PRIMARY KEY, description text, price numeric)");

        // tag::outbox[]
        PostgresOutbox outbox = PostgresOutbox.forTable("public.items")
                .payloadKey("item_code", "ItemCode")              // optional: JSON keys; columns(...), key(...) to choose
                .build();
        outbox.install(dataSource);                               // idempotent, one transaction, no superuser, no extension
        String sql = outbox.script(dataSource);                   // the same, formatted and commented, for Flyway/Liquibase

        SyncEngine engine = SyncEngine.builder()
                .provider(PostgresProvider.create(dataSource))    // LISTENs: a commit wakes the object at once
                .watermarks(JdbcWatermarkStore.create(dataSource))
                .track(outbox.track("Items").initialSync(InitialSync.INCREMENTAL).maxRows(5_000))
                .destination("search", batch -> index(batch))
                .build();
        engine.start();
        outbox.trim(dataSource, engine);                          // now and then: below every reader's watermark
        // end::outbox[]
        try (engine) {
            assertThat(sql).contains("CREATE TABLE IF NOT EXISTS");
            // An INCREMENTAL object starts from "now": a change made before the seed is not news.
            Await.seeded(engine, "Items");
            database.execute("INSERT INTO public.items VALUES ('A-100', 'Widget', 9.50)");
            recorder.awaitChanges(1, Duration.ofSeconds(30));
            assertThat(recorder.changes().get(0).field("ItemCode").orElseThrow().asText()).isEqualTo("A-100");
        }

        // tag::verifier[]
        ProcedureContractVerifier.forFunction(dataSource, "public.items_changes")
                .keyField("ItemCode")                             // the JSON key that carries the row's key
                .insert("INSERT INTO items (item_code, description, price) VALUES (?, 'new', 1)")
                .update("UPDATE items SET price = price + 1 WHERE item_code = ?")
                .clear("UPDATE items SET description = NULL WHERE item_code = ?", "description")
                .delete("DELETE FROM items WHERE item_code = ?")
                .verify()
                .assertSafe();
        // end::verifier[]
        // assertSafe() above throws when any scenario is not SAFE.
    }

    /** The README's destination: here it records what it is given. */
    private void index(ChangeBatch batch) throws Exception {
        recorder.deliver(batch);
    }
}
