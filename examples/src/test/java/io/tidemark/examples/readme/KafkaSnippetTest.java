package io.tidemark.examples.readme;

import io.tidemark.kafka.KafkaDestination;
import io.tidemark.postgres.PostgresOutbox;
import io.tidemark.postgres.PostgresProvider;
import io.tidemark.sync.DeliveryPolicy;
import io.tidemark.sync.JdbcWatermarkStore;
import io.tidemark.sync.SyncEngine;
import io.tidemark.testing.EmbeddedPostgresTest;
import io.tidemark.testing.TestDatabase;
import org.junit.jupiter.api.Test;

import javax.sql.DataSource;
import java.time.Duration;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * kafka/README.md: the destination and engine snippets, built as written (the producer does not connect before the
 * first page, so no broker is needed here; kafka's own tests deliver to a real one). ReadmeSnippetsTest checks that
 * the document holds these regions verbatim.
 */
@EmbeddedPostgresTest
class KafkaSnippetTest {

    @Test
    void the_kafka_snippets_build_a_destination_and_an_engine(DataSource dataSource, TestDatabase database) {
        database.execute("CREATE TABLE public.kafka_items (id bigint PRIMARY KEY, name text)");
        PostgresOutbox outbox = PostgresOutbox.forTable("public.kafka_items").build();
        outbox.install(dataSource);
        String bootstrapServers = "localhost:9";
        String instanceName = "app-1";

        // tag::kafka[]
        KafkaDestination kafka = KafkaDestination.builder()
                .bootstrapServers(bootstrapServers)      // e.g. "broker-1:9092,broker-2:9092"
                .topicPattern("tidemark.{object}")       // or .topic("items"), or .topicPerObject(object -> ...)
                .keyColumns("id")                        // the record key: the row's key, so a row stays in one partition
                .tombstones(true)                        // after each delete, a record with the key and no value
                .producerProperty("linger.ms", 20)       // any producer property, except the few below
                .build();

        SyncEngine engine = SyncEngine.builder()
                .provider(PostgresProvider.create(dataSource))
                .watermarks(JdbcWatermarkStore.create(dataSource))
                .track(outbox.track("Items"))
                .destination("kafka", kafka, DeliveryPolicy.retryThenBlock(8, Duration.ofSeconds(1)))
                .build();
        // end::kafka[]
        try (kafka; engine) {
            engine.runOnce();   // the first cycle seeds: nothing is sent
            assertThat(kafka.toString()).contains("tidemark.{object}");
        }

        // tag::kafka-transactional[]
        KafkaDestination transactional = KafkaDestination.builder()
                .bootstrapServers(bootstrapServers)
                .topic("items")
                .keyColumns("id")
                .transactionalId("tidemark-items-" + instanceName)   // stable for this instance, unique among instances
                .build();
        // end::kafka-transactional[]
        try (transactional) {
            assertThat(transactional.toString()).contains("transactional id tidemark-items-app-1");
        }
    }
}
