package io.tidemark.kafka;

import io.tidemark.sync.Change;
import io.tidemark.sync.ChangeBatch;
import io.tidemark.sync.Operation;
import io.tidemark.sync.SyncType;
import io.tidemark.sync.spi.DeliveryException;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;

import static io.tidemark.kafka.Records.header;
import static io.tidemark.kafka.Records.key;
import static io.tidemark.kafka.Records.version;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.catchThrowableOfType;

/** The destination against a real broker, page by page as the engine hands them over. */
class KafkaDestinationTest {

    private static InProcessKafka kafka;

    @BeforeAll
    static void startKafka() throws Exception {
        kafka = InProcessKafka.start();
    }

    @AfterAll
    static void stopKafka() throws Exception {
        kafka.close();
    }

    private static KafkaDestination.Builder to(String topic) {
        return KafkaDestination.builder().bootstrapServers(kafka.bootstrapServers()).topic(topic).keyColumns("id")
                .closeTimeout(Duration.ofSeconds(5));
    }

    private static Change change(Operation op, long version, long id, String extra) {
        String json = "{\"$operation\":\"" + op.code() + "\",\"$version\":" + version + ",\"id\":" + id + extra + "}";
        return Change.fromRaw(op, version, null, json.getBytes(StandardCharsets.UTF_8));
    }

    /** {@code pages} pages of {@code perPage} changes, each change to one of {@code keys} rows, versions rising. */
    private static List<ChangeBatch> pages(String object, int pages, int perPage, int keys) {
        List<ChangeBatch> batches = new ArrayList<>();
        long version = 0;
        for (int p = 1; p <= pages; p++) {
            List<Change> changes = new ArrayList<>();
            for (int i = 0; i < perPage; i++) {
                version++;
                changes.add(change(version <= keys ? Operation.INSERT : Operation.UPDATE, version, version % keys,
                        ",\"n\":" + version));
            }
            batches.add(new ChangeBatch(object, 0, (long) pages * perPage, SyncType.DIFF, 0, changes, p, pages,
                    (long) pages * perPage));
        }
        return batches;
    }

    @Test
    void every_change_of_a_row_arrives_in_one_partition_in_order_across_many_pages() throws Exception {
        kafka.createTopic("ordered", 6);
        List<ChangeBatch> batches = pages("Items", 40, 50, 37);
        try (KafkaDestination destination = to("ordered").build()) {
            for (ChangeBatch batch : batches) {
                destination.deliver(batch);
            }
        }

        List<ConsumerRecord<byte[], byte[]>> records = kafka.readAll("ordered", false, 2000);

        assertThat(records).hasSize(2000);
        Map<String, List<ConsumerRecord<byte[], byte[]>>> byKey = new java.util.HashMap<>();
        records.forEach(r -> byKey.computeIfAbsent(key(r), k -> new ArrayList<>()).add(r));
        assertThat(byKey).hasSize(37);
        Set<Integer> partitionsUsed = new HashSet<>();
        byKey.forEach((key, rows) -> {
            assertThat(rows).extracting(ConsumerRecord::partition).as(key).containsOnly(rows.get(0).partition());
            partitionsUsed.add(rows.get(0).partition());
            List<ConsumerRecord<byte[], byte[]>> byOffset = new ArrayList<>(rows);
            byOffset.sort(Comparator.comparingLong(ConsumerRecord::offset));
            assertThat(byOffset).extracting(Records::version).as(key).isSorted();
        });
        assertThat(partitionsUsed).as("37 keys spread over the 6 partitions").hasSizeGreaterThan(1);
    }

    @Test
    void the_envelope_goes_in_headers_and_the_value_is_the_change_as_returned() throws Exception {
        kafka.createTopic("headers", 1);
        ChangeBatch batch = new ChangeBatch("Items", 10, 20, SyncType.FULL, 1,
                List.of(change(Operation.INSERT, 11, 1, ",\"price\":12.50")), 2, 3, 250);
        try (KafkaDestination destination = to("headers").build()) {
            destination.deliver(batch);
        }

        ConsumerRecord<byte[], byte[]> record = kafka.readAll("headers", false, 1).get(0);

        assertThat(key(record)).isEqualTo("{\"id\":1}");
        assertThat(new String(record.value(), StandardCharsets.UTF_8))
                .isEqualTo("{\"$operation\":\"I\",\"$version\":11,\"id\":1,\"price\":12.50}");
        assertThat(header(record, "object")).isEqualTo("Items");
        assertThat(header(record, "idempotencyKey")).isEqualTo(batch.idempotencyKey());
        assertThat(header(record, "batchId")).isEqualTo("Items:10-20");
        assertThat(header(record, "fromVersion")).isEqualTo("10");
        assertThat(header(record, "toVersion")).isEqualTo("20");
        assertThat(header(record, "syncType")).isEqualTo("FULL");
        assertThat(header(record, "reasonCode")).isEqualTo("1");
        assertThat(header(record, "page")).isEqualTo("2");
        assertThat(header(record, "pageCount")).isEqualTo("3");
        assertThat(header(record, "totalChanges")).isEqualTo("250");
    }

    @Test
    void a_delete_is_followed_by_a_tombstone_when_asked_and_the_pattern_names_a_topic_per_object() throws Exception {
        kafka.createTopic("tm.Orders", 2);
        ChangeBatch batch = new ChangeBatch("Orders", 0, 3, SyncType.DIFF, 0, List.of(
                change(Operation.INSERT, 1, 5, ""), change(Operation.DELETE, 2, 5, ""),
                change(Operation.INSERT, 3, 6, "")), 1, 1, 3);
        try (KafkaDestination destination = KafkaDestination.builder().bootstrapServers(kafka.bootstrapServers())
                .topicPattern("tm.{object}").keyColumns("id").tombstones(true).build()) {
            destination.deliver(batch);
        }

        List<ConsumerRecord<byte[], byte[]>> records = kafka.readAll("tm.Orders", false, 4);
        List<ConsumerRecord<byte[], byte[]>> five = records.stream().filter(r -> key(r).equals("{\"id\":5}"))
                .sorted(Comparator.comparingLong(ConsumerRecord::offset)).toList();

        assertThat(records).hasSize(4);
        assertThat(five).hasSize(3);
        assertThat(Records.value(five.get(1)).get("$operation").asText()).isEqualTo("D");
        assertThat(five.get(2).value()).as("the tombstone after the delete").isNull();
        assertThat(header(five.get(2), "idempotencyKey")).isEqualTo(batch.idempotencyKey());
    }

    @Test
    void a_record_too_large_is_a_fatal_error_naming_the_topic() throws Exception {
        kafka.createTopic("small", 1);
        ChangeBatch batch = new ChangeBatch("Items", 0, 2, SyncType.DIFF, 0, List.of(
                change(Operation.INSERT, 1, 1, ""),
                change(Operation.INSERT, 2, 2, ",\"text\":\"" + "x".repeat(4000) + "\"")), 1, 1, 2);
        try (KafkaDestination destination = to("small").producerProperty("max.request.size", 2048).build()) {
            DeliveryException e = catchThrowableOfType(DeliveryException.class, () -> destination.deliver(batch));

            assertThat(e.isRetryable()).isFalse();
            assertThat(e).hasMessageContaining("page 1/1 of object 'Items'")
                    .hasMessageContaining("to topic 'small'")
                    .hasMessageContaining("RecordTooLargeException");
        }
    }

    @Test
    void a_transactional_page_is_all_or_nothing_for_a_read_committed_consumer() throws Exception {
        kafka.createTopic("tx", 3);
        ChangeBatch good = new ChangeBatch("Items", 0, 2, SyncType.DIFF, 0, List.of(
                change(Operation.INSERT, 1, 1, ""), change(Operation.INSERT, 2, 2, "")), 1, 1, 2);
        ChangeBatch bad = new ChangeBatch("Items", 2, 5, SyncType.DIFF, 0, List.of(
                change(Operation.UPDATE, 3, 1, ""), change(Operation.UPDATE, 4, 3, ""),
                change(Operation.UPDATE, 5, 2, ",\"text\":\"" + "x".repeat(4000) + "\"")), 1, 1, 3);
        ChangeBatch after = new ChangeBatch("Items", 2, 6, SyncType.DIFF, 0, List.of(
                change(Operation.UPDATE, 6, 1, "")), 1, 1, 1);
        try (KafkaDestination destination = to("tx").transactionalId("tidemark-tx-test")
                .producerProperty("max.request.size", 2048).build()) {
            destination.deliver(good);
            DeliveryException e = catchThrowableOfType(DeliveryException.class, () -> destination.deliver(bad));
            assertThat(e.isRetryable()).isFalse();
            assertThat(e).hasMessageContaining("to topic 'tx'").hasMessageContaining("transaction aborted");
            destination.deliver(after);
        }

        List<ConsumerRecord<byte[], byte[]>> committed = kafka.readAll("tx", true, 3);

        assertThat(committed).extracting(Records::version).containsExactlyInAnyOrder(1L, 2L, 6L);
    }

    @Test
    void a_fenced_transactional_destination_refuses_every_later_page_fatally() throws Exception {
        kafka.createTopic("fenced", 1);
        ChangeBatch first = new ChangeBatch("Items", 0, 1, SyncType.DIFF, 0, List.of(
                change(Operation.INSERT, 1, 1, "")), 1, 1, 1);
        ChangeBatch second = new ChangeBatch("Items", 1, 2, SyncType.DIFF, 0, List.of(
                change(Operation.INSERT, 2, 2, "")), 1, 1, 1);
        ChangeBatch third = new ChangeBatch("Items", 2, 3, SyncType.DIFF, 0, List.of(
                change(Operation.INSERT, 3, 3, "")), 1, 1, 1);
        try (KafkaDestination old = to("fenced").transactionalId("tidemark-fenced").build();
             KafkaDestination successor = to("fenced").transactionalId("tidemark-fenced").build()) {
            old.deliver(first);
            successor.deliver(second);   // initialising its transactions fences the old producer

            DeliveryException e = catchThrowableOfType(DeliveryException.class, () -> old.deliver(second));
            DeliveryException again = catchThrowableOfType(DeliveryException.class, () -> old.deliver(second));

            assertThat(e.isRetryable()).as(e.getMessage()).isFalse();
            assertThat(e).hasMessageContaining("to topic 'fenced'");
            assertThat(again.isRetryable()).isFalse();
            assertThat(again).hasMessageContaining("was fenced by another producer with the same id");
            // The fenced one made no new producer that would have fenced its successor in turn.
            successor.deliver(third);
        }

        assertThat(kafka.readAll("fenced", true, 3)).extracting(Records::version).containsExactly(1L, 2L, 3L);
    }
}
