package io.tidemark.kafka;

import io.tidemark.postgres.PostgresOutbox;
import io.tidemark.postgres.PostgresProvider;
import io.tidemark.sync.Change;
import io.tidemark.sync.ChangeBatch;
import io.tidemark.sync.DeliveryPolicy;
import io.tidemark.sync.InMemoryDeadLetterStore;
import io.tidemark.sync.InMemoryWatermarkStore;
import io.tidemark.sync.Outcome;
import io.tidemark.sync.SyncEngine;
import io.tidemark.sync.spi.DeadLetter;
import io.tidemark.sync.spi.Destination;
import io.tidemark.testing.EmbeddedPostgresTest;
import io.tidemark.testing.RecordingDestination;
import io.tidemark.testing.TestDatabase;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

import javax.sql.DataSource;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Collections;
import java.util.Comparator;
import java.util.HashMap;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.stream.Collectors;

import static io.tidemark.kafka.Records.header;
import static io.tidemark.kafka.Records.key;
import static org.assertj.core.api.Assertions.assertThat;

/**
 * The destination behind a real engine polling a generated outbox in the embedded PostgreSQL: what reaches the
 * topic is what the engine delivered, a stopped and restarted broker loses nothing, and a fatal error is
 * dead-lettered.
 */
@EmbeddedPostgresTest
class KafkaEngineTest {

    private static InProcessKafka kafka;

    @BeforeAll
    static void startKafka() throws Exception {
        kafka = InProcessKafka.start();
    }

    @AfterAll
    static void stopKafka() throws Exception {
        kafka.close();
    }

    @AfterEach
    void disarm() {
        BrokerOutage.disarm();
    }

    /** A destination short on patience, so that an outage fails a page in seconds and the engine retries it. */
    private static KafkaDestination.Builder impatient(String topic) {
        return KafkaDestination.builder()
                .bootstrapServers(kafka.bootstrapServers())
                .topic(topic)
                .keyColumns("id")
                .producerProperty("request.timeout.ms", 1500)
                .producerProperty("delivery.timeout.ms", 3000)
                .producerProperty("max.block.ms", 3000)
                .producerProperty("reconnect.backoff.max.ms", 500)
                .producerProperty("interceptor.classes", BrokerOutage.class.getName())
                .closeTimeout(Duration.ofSeconds(5));
    }

    private static PostgresOutbox outbox(DataSource dataSource, TestDatabase database, String table) {
        database.execute("CREATE TABLE public." + table + " (id bigint PRIMARY KEY, name text, n int)");
        PostgresOutbox outbox = PostgresOutbox.forTable("public." + table).build();
        outbox.install(dataSource);
        return outbox;
    }

    /** 100 rows inserted, then updated 9 times, each round its own transaction: 1,000 changes, 10 per row. */
    private static void writeRounds(TestDatabase database, String table) {
        database.execute("INSERT INTO public." + table + " SELECT g, 'row ' || g, 0 FROM generate_series(1, 100) g");
        for (int round = 1; round <= 9; round++) {
            database.execute("UPDATE public." + table + " SET n = " + round);
        }
    }

    /** Runs cycles until the object is delivered (an outage may block a cycle whose attempts ran out). */
    private static void deliverAll(SyncEngine engine, String object) {
        Instant deadline = Instant.now().plusSeconds(90);
        Outcome outcome;
        do {
            outcome = engine.runOnce().get(object).outcome();
        } while (outcome != Outcome.DELIVERED && Instant.now().isBefore(deadline));
        assertThat(outcome).isEqualTo(Outcome.DELIVERED);
    }

    /** Stops the broker now and starts it again after {@code down}, on another thread. */
    private static CompletableFuture<Void> outage(Duration down) {
        CompletableFuture<Void> restarted = new CompletableFuture<>();
        BrokerOutage.arm(450, () -> {
            kafka.stopBroker();
            Thread restart = new Thread(() -> {
                try {
                    Thread.sleep(down.toMillis());
                    kafka.startBroker();
                    restarted.complete(null);
                } catch (Exception e) {
                    restarted.completeExceptionally(e);
                }
            }, "broker-restart");
            restart.setDaemon(true);
            restart.start();
        });
        return restarted;
    }

    /** The engine's view of what was delivered: each change's key and version, in delivery order. */
    private static List<String> identities(List<Change> changes) {
        return changes.stream().map(c -> "{\"id\":" + c.field("id").orElseThrow().asLong() + "}@"
                + c.version().orElseThrow()).toList();
    }

    private static String identity(ConsumerRecord<byte[], byte[]> record) {
        return key(record) + "@" + Records.version(record);
    }

    @Test
    void the_engine_delivers_a_generated_outboxs_inserts_updates_and_deletes_as_it_delivers_them_elsewhere(
            DataSource dataSource, TestDatabase database) throws Exception {
        PostgresOutbox outbox = outbox(dataSource, database, "items");
        kafka.createTopic("items", 4);
        RecordingDestination recorder = new RecordingDestination();
        try (KafkaDestination destination = impatient("items").tombstones(true).build();
             SyncEngine engine = SyncEngine.builder()
                     .provider(PostgresProvider.create(dataSource))
                     .watermarks(InMemoryWatermarkStore.create())
                     .track(outbox.track("Items").pageSize(7))
                     .destination("kafka", destination)
                     .destination("recorder", recorder)
                     .build()) {
            engine.runOnce();   // seeds
            database.execute("INSERT INTO public.items SELECT g, 'row ' || g, 0 FROM generate_series(1, 20) g");
            database.execute("UPDATE public.items SET name = 'renamed' WHERE id <= 5");
            database.execute("DELETE FROM public.items WHERE id IN (2, 4)");
            deliverAll(engine, "Items");
        }
        List<Change> delivered = recorder.changes();
        assertThat(delivered).hasSize(27);

        List<ConsumerRecord<byte[], byte[]>> records = kafka.readAll("items", false, 29);
        List<ConsumerRecord<byte[], byte[]>> values = records.stream().filter(r -> r.value() != null).toList();
        List<ConsumerRecord<byte[], byte[]>> tombstones = records.stream().filter(r -> r.value() == null).toList();

        assertThat(values).extracting(KafkaEngineTest::identity)
                .containsExactlyInAnyOrderElementsOf(identities(delivered));
        Map<String, String> deliveredJson = new HashMap<>();
        delivered.forEach(c -> deliveredJson.put("{\"id\":" + c.field("id").orElseThrow().asLong() + "}@"
                + c.version().orElseThrow(), c.rawJson()));
        values.forEach(r -> assertThat(new String(r.value(), java.nio.charset.StandardCharsets.UTF_8))
                .isEqualTo(deliveredJson.get(identity(r))));
        assertThat(tombstones).extracting(Records::key).containsExactlyInAnyOrder("{\"id\":2}", "{\"id\":4}");
        assertThat(values).allSatisfy(r -> {
            assertThat(header(r, "object")).isEqualTo("Items");
            assertThat(header(r, "idempotencyKey")).startsWith("tm1-");
        });
        // Pages of 7: 27 changes make 4 pages; each page's records carry its own key.
        assertThat(values.stream().map(r -> header(r, "idempotencyKey")).distinct()).hasSize(4);
    }

    @Test
    void a_broker_stopped_mid_page_loses_nothing_and_duplicates_only_the_retried_pages_under_their_keys(
            DataSource dataSource, TestDatabase database) throws Exception {
        Outage outage = throughAnOutage(dataSource, database, "restarted", impatient("restarted"));

        List<ConsumerRecord<byte[], byte[]>> records = kafka.readAll("restarted", false, 1000);

        Map<String, List<ConsumerRecord<byte[], byte[]>>> byIdentity = records.stream()
                .collect(Collectors.groupingBy(KafkaEngineTest::identity, LinkedHashMap::new, Collectors.toList()));
        assertThat(byIdentity.keySet()).as("every change arrived")
                .containsExactlyInAnyOrderElementsOf(outage.delivered());
        assertThat(outage.refusedPages()).as("the outage refused a page").isNotEmpty();
        byIdentity.values().stream().filter(copies -> copies.size() > 1).forEach(copies ->
                assertThat(copies).extracting(r -> header(r, "idempotencyKey"))
                        .as("a duplicate is a record of a page that was refused and offered again")
                        .containsOnly(header(copies.get(0), "idempotencyKey"))
                        .allMatch(outage.refusedPages()::contains));
        assertOrderedPerKey(records);
    }

    @Test
    void with_transactions_a_broker_stopped_mid_page_loses_nothing_and_read_committed_sees_each_change_once(
            DataSource dataSource, TestDatabase database) throws Exception {
        Outage outage = throughAnOutage(dataSource, database, "transacted", impatient("transacted")
                .transactionalId("tidemark-transacted").producerProperty("transaction.timeout.ms", 10_000));

        List<ConsumerRecord<byte[], byte[]>> committed = kafka.readAll("transacted", true, 1000);

        assertThat(committed).extracting(KafkaEngineTest::identity)
                .containsExactlyInAnyOrderElementsOf(outage.delivered());
        assertThat(outage.refusedPages()).as("the outage refused a page").isNotEmpty();
        assertOrderedPerKey(committed);
    }

    /** What the engine delivered (to a recording destination beside Kafka) and the pages Kafka refused. */
    private record Outage(List<String> delivered, Set<String> refusedPages) {
    }

    /**
     * 1,000 changes of a generated outbox in pages of 100, delivered by the engine to {@code destination} (topic
     * {@code table}, 6 partitions) while the broker is stopped in the middle of page 5 and started again 4 s later.
     */
    private static Outage throughAnOutage(DataSource dataSource, TestDatabase database, String table,
                                          KafkaDestination.Builder destination) throws Exception {
        PostgresOutbox outbox = outbox(dataSource, database, table);
        kafka.createTopic(table, 6);
        RecordingDestination recorder = new RecordingDestination();
        Set<String> refusedPages = Collections.synchronizedSet(new HashSet<>());
        CompletableFuture<Void> restarted;
        try (KafkaDestination kafkaDestination = destination.build();
             SyncEngine engine = SyncEngine.builder()
                     .provider(PostgresProvider.create(dataSource))
                     .watermarks(InMemoryWatermarkStore.create())
                     .track(outbox.track(table).pageSize(100))
                     .destination("kafka", refusalsNoted(kafkaDestination, refusedPages),
                             DeliveryPolicy.retryThenBlock(20, Duration.ofMillis(300)))
                     .destination("recorder", recorder)
                     .build()) {
            engine.runOnce();   // seeds
            writeRounds(database, table);
            restarted = outage(Duration.ofSeconds(4));
            deliverAll(engine, table);
        }
        restarted.get();
        List<String> delivered = identities(recorder.changes());
        assertThat(delivered).hasSize(1000);
        return new Outage(delivered, refusedPages);
    }

    @Test
    void a_fatal_error_is_dead_lettered_at_once_and_later_changes_still_arrive(DataSource dataSource,
                                                                               TestDatabase database) throws Exception {
        PostgresOutbox outbox = outbox(dataSource, database, "oversized");
        kafka.createTopic("oversized", 1);
        try (KafkaDestination destination = impatient("oversized").producerProperty("max.request.size", 2048)
                .build();
             SyncEngine engine = SyncEngine.builder()
                     .provider(PostgresProvider.create(dataSource))
                     .watermarks(InMemoryWatermarkStore.create())
                     .deadLetters(InMemoryDeadLetterStore.create())
                     .track(outbox.track("Oversized"))
                     .destination("kafka", destination, DeliveryPolicy.deadLetterAfter(5, Duration.ofMillis(10)))
                     .build()) {
            engine.runOnce();   // seeds
            database.execute("INSERT INTO public.oversized VALUES (1, repeat('x', 5000), 0)");
            engine.runOnce();
            database.execute("INSERT INTO public.oversized VALUES (2, 'small', 0)");
            deliverAll(engine, "Oversized");

            List<DeadLetter> letters = engine.deadLetters().list("Oversized", "kafka");
            assertThat(letters).singleElement().satisfies(letter -> {
                assertThat(letter.attempts()).as("fatal: no retries").isEqualTo(1);
                assertThat(letter.lastError()).contains("to topic 'oversized'").contains("RecordTooLargeException");
            });
        }

        assertThat(kafka.readAll("oversized", false, 1)).extracting(Records::key).containsExactly("{\"id\":2}");
    }

    /** Within each partition, each key's versions never go back (a retried page repeats, it never reorders). */
    private static void assertOrderedPerKey(List<ConsumerRecord<byte[], byte[]>> records) {
        List<ConsumerRecord<byte[], byte[]>> sorted = new ArrayList<>(records);
        sorted.sort(Comparator.comparingInt((ConsumerRecord<byte[], byte[]> r) -> r.partition())
                .thenComparingLong(ConsumerRecord::offset));
        Map<String, Integer> partitionOf = new HashMap<>();
        sorted.forEach(r -> assertThat(partitionOf.computeIfAbsent(key(r), k -> r.partition()))
                .as("one partition per key").isEqualTo(r.partition()));
        Records.versionsByKey(sorted).forEach((key, versions) -> assertThat(versions).as(key).isSorted());
    }

    /** Notes the idempotency key of every page the destination refuses, then refuses it as the destination did. */
    private static Destination refusalsNoted(KafkaDestination destination, Set<String> refused) {
        return (ChangeBatch batch) -> {
            try {
                destination.deliver(batch);
            } catch (RuntimeException e) {
                refused.add(batch.idempotencyKey());
                throw e;
            }
        };
    }
}
