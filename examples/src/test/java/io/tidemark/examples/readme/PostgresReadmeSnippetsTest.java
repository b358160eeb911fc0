package io.tidemark.examples.readme;

import io.tidemark.postgres.PostgresOutbox;
import io.tidemark.postgres.PostgresProvider;
import io.tidemark.postgres.TrimResult;
import io.tidemark.sync.ChangeBatch;
import io.tidemark.sync.InitialSync;
import io.tidemark.sync.JdbcWatermarkStore;
import io.tidemark.sync.SyncEngine;
import io.tidemark.sync.TrackedObject;
import io.tidemark.sync.spi.WatermarkStore;
import io.tidemark.testing.EmbeddedPostgresTest;
import io.tidemark.testing.ProcedureContractVerifier;
import io.tidemark.testing.RecordingDestination;
import io.tidemark.testing.TestDatabase;
import org.junit.jupiter.api.Test;

import javax.sql.DataSource;
import java.time.Duration;
import java.util.List;

import static org.assertj.core.api.Assertions.assertThat;

/** provider-postgres/README.md: its Java snippets, run as written (ReadmeSnippetsTest checks they are verbatim). */
@EmbeddedPostgresTest
class PostgresReadmeSnippetsTest {

    private final RecordingDestination recorder = new RecordingDestination();

    @Test
    void the_outbox_trim_and_verifier_snippets_work_as_written(DataSource dataSource, TestDatabase database)
            throws Exception {
        database.execute("CREATE TABLE public.items (item_code text PRIMARY KEY, description text, price numeric)");

        // tag::pg-outbox[]
        PostgresOutbox outbox = PostgresOutbox.forTable("public.items").build();
        outbox.install(dataSource);                       // idempotent, one transaction; no superuser, no extension

        SyncEngine engine = SyncEngine.builder()
                .provider(PostgresProvider.create(dataSource))          // wakes objects on commit (LISTEN)
                .watermarks(JdbcWatermarkStore.create(dataSource))
                .track(outbox.track("Items").initialSync(InitialSync.INCREMENTAL).maxRows(5_000))
                .destination("search", batch -> index(batch))
                .build();
        engine.start();

        outbox.trim(dataSource, engine);                  // now and then: deletes what every reader has stored
        // end::pg-outbox[]
        try (engine) {
            Await.seeded(engine, "Items");
            database.execute("INSERT INTO public.items VALUES ('A-100', 'Widget', 9.50)");
            recorder.awaitChanges(1, Duration.ofSeconds(30));
            assertThat(recorder.changes().get(0).field("item_code").orElseThrow().asText()).isEqualTo("A-100");
        }
        WatermarkStore watermarkStore = JdbcWatermarkStore.create(dataSource);
        List<TrackedObject> objects = List.of(outbox.track("Items"));

        // tag::pg-trim[]
        TrimResult trimmed = outbox.trim(dataSource, engine);                      // readers: the engine's objects
        TrimResult alsoTrimmed = outbox.trim(dataSource, watermarkStore, objects); // or any store and objects
        // end::pg-trim[]
        assertThat(trimmed).isNotNull();
        assertThat(alsoTrimmed).isNotNull();

        // tag::pg-verifier[]
        ProcedureContractVerifier.forFunction(dataSource, "public.items_changes")
                .keyField("item_code")                         // the JSON key carrying the row's key
                .insert("INSERT INTO items (item_code, description, price) VALUES (?, 'new', 1)")
                .update("UPDATE items SET price = price + 1 WHERE item_code = ?")   // leaves description alone
                .clear("UPDATE items SET description = NULL WHERE item_code = ?", "description")
                .delete("DELETE FROM items WHERE item_code = ?")
                .verify()
                .assertSafe();
        // end::pg-verifier[]
        // assertSafe() above throws unless every scenario is SAFE.
    }

    /** The snippet's destination: here it records what it is given. */
    private void index(ChangeBatch batch) {
        recorder.deliver(batch);
    }
}
