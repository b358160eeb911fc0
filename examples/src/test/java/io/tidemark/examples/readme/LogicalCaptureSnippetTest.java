package io.tidemark.examples.readme;

import io.tidemark.postgres.PostgresLogicalCapture;
import io.tidemark.postgres.PostgresLogicalProvider;
import io.tidemark.sync.JdbcWatermarkStore;
import io.tidemark.sync.SyncEngine;
import io.tidemark.testing.EmbeddedPostgresTest;
import io.tidemark.testing.RecordingDestination;
import io.tidemark.testing.TestDatabase;
import org.junit.jupiter.api.Test;

import javax.sql.DataSource;
import java.time.Duration;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * provider-postgres/README.md, "Log-based capture": the snippet run as written (ReadmeSnippetsTest checks it is
 * verbatim) on the embedded server, which runs with {@code wal_level = logical}. Its own class, so its own database.
 */
@EmbeddedPostgresTest
class LogicalCaptureSnippetTest {

    @Test
    void the_logical_capture_snippet_installs_streams_and_delivers(DataSource dataSource, TestDatabase database)
            throws Exception {
        database.execute("CREATE TABLE public.items (id bigint PRIMARY KEY, name text, qty int)");
        database.execute("CREATE TABLE public.orders (id bigint PRIMARY KEY, item bigint, qty int)");
        String jdbcUrl = database.jdbcUrl();
        String user = "postgres";
        String password = null;
        RecordingDestination destination = new RecordingDestination();

        // tag::logical-capture[]
        PostgresLogicalCapture capture = PostgresLogicalCapture.forTables("public.items", "public.orders")
                .slot("tidemark_shop")
                .build();
        capture.install(dataSource);              // or hand capture.script() to a DBA

        JdbcWatermarkStore store = JdbcWatermarkStore.create(dataSource);
        PostgresLogicalProvider provider = PostgresLogicalProvider.builder(capture)
                .connect(jdbcUrl, user, password)   // a role with the REPLICATION attribute
                .watermarks(store)                  // the engine's store: the slot moves only past what it holds
                .build();
        SyncEngine engine = SyncEngine.builder()
                .provider(provider)
                .watermarks(store)
                .track(capture.track("Items", "public.items"))
                .track(capture.track("Orders", "public.orders"))
                .destination("search", destination)
                .build();
        engine.start();
        // end::logical-capture[]

        try {
            // The first cycle of each object exports its (empty) table and stores a watermark: write after it.
            Await.seeded(engine, "Items");
            Await.seeded(engine, "Orders");
            database.execute("INSERT INTO public.items VALUES (1, 'bolt', 10)");
            database.execute("INSERT INTO public.orders VALUES (7, 1, 2)");
            assertThat(destination.awaitChanges(2, Duration.ofSeconds(20)))
                    .extracting(c -> c.fields().get("id").asInt()).containsExactlyInAnyOrder(1, 7);
        } finally {
            engine.close();
            provider.close();
            capture.uninstall(dataSource);
        }
    }
}
