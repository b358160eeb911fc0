package io.tidemark.examples.readme;

// tag::recording[]
import io.tidemark.postgres.PostgresOutbox;
import io.tidemark.postgres.PostgresProvider;
import io.tidemark.sync.JdbcWatermarkStore;
import io.tidemark.sync.Outcome;
import io.tidemark.sync.SyncEngine;
import io.tidemark.testing.EmbeddedPostgresTest;
import io.tidemark.testing.RecordingDestination;
import io.tidemark.testing.TestDatabase;
import org.junit.jupiter.api.Test;

import javax.sql.DataSource;
import java.time.Duration;

import static org.junit.jupiter.api.Assertions.assertEquals;

@EmbeddedPostgresTest
class ItemsDeliveryTest {

    @Test
    void a_refused_batch_is_offered_again(DataSource dataSource, TestDatabase database) throws Exception {
        database.execute("CREATE TABLE public.items (item_code text PRIMARY KEY, description text)");
        PostgresOutbox outbox = PostgresOutbox.forTable("public.items").build();
        outbox.install(dataSource);
        RecordingDestination recorder = new RecordingDestination().refuseAll();
        try (SyncEngine engine = SyncEngine.builder()
                .provider(PostgresProvider.create(dataSource))
                .watermarks(JdbcWatermarkStore.create(dataSource))
                .track(outbox.track("Items"))
                .destination("recorder", recorder)
                .build()) {
            engine.runOnce();                                               // seeds
            database.execute("INSERT INTO public.items VALUES ('A-100', 'Widget')");

            assertEquals(Outcome.BLOCKED, engine.runOnce().get("Items").outcome());   // refused: the watermark stays
            assertEquals(1, recorder.offered());
            assertEquals(0, recorder.changes().size());

            recorder.acceptAll();
            engine.start();                                                 // polls in the background
            recorder.awaitChanges(1, Duration.ofSeconds(30));               // waits on a monitor, not on sleeps
            assertEquals("A-100", recorder.changes().get(0).field("item_code").orElseThrow().asText());
        }
    }
}
// end::recording[]
