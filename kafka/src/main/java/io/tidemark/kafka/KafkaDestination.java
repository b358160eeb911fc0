package io.tidemark.kafka;

import io.tidemark.kafka.internal.IdempotentSender;
import io.tidemark.kafka.internal.PageRecords;
import io.tidemark.kafka.internal.PageSender;
import io.tidemark.kafka.internal.ProducerSettings;
import io.tidemark.kafka.internal.RecordKeys;
import io.tidemark.kafka.internal.TopicNames;
import io.tidemark.kafka.internal.TransactionalSender;
import io.tidemark.sync.ChangeBatch;
import io.tidemark.sync.internal.config.Checks;
import io.tidemark.sync.spi.Destination;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.Producer;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.KafkaException;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.time.Duration;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.function.Function;
import java.util.function.Supplier;

/**
 * Sends each change to a Kafka topic (kafka/README.md): one record per change, keyed by the row's key columns so
 * that every change of one row goes to one partition in order, the change's JSON as the value, the page's envelope
 * fields as headers; optionally a tombstone after each delete.
 *
 * <pre>{@code
 * KafkaDestination kafka = KafkaDestination.builder()
 *         .bootstrapServers("broker-1:9092,broker-2:9092")
 *         .topicPattern("tidemark.{object}")
 *         .keyColumns("id")
 *         .build();
 * }</pre>
 *
 * <p>{@link #deliver} returns only once Kafka acknowledged every record of the page ({@code acks=all}, an
 * idempotent producer), so the engine moves the destination's position only past changes Kafka holds. A page that
 * fails is offered again whole; records of it that had been written before are then written again, under the same
 * {@code idempotencyKey} header. With {@link Builder#transactionalId} each page is one transaction instead, and a
 * {@code read_committed} consumer sees each page once.
 *
 * <p>The producer is made by {@link Builder#build()} and closed by {@link #close()}; close the destination after
 * the engine. One instance is thread-safe and may serve several objects.
 */
public final class KafkaDestination implements Destination, AutoCloseable {

    private static final Logger LOG = LoggerFactory.getLogger(KafkaDestination.class);

    /** How long {@link #close()} waits for records still in flight unless set. */
    public static final Duration DEFAULT_CLOSE_TIMEOUT = Duration.ofSeconds(30);

    private final TopicNames topics;
    private final RecordKeys keys;
    private final boolean tombstones;
    private final PageSender sender;
    private final Duration closeTimeout;
    private final String description;

    private KafkaDestination(Builder b, TopicNames topics, PageSender sender) {
        this.topics = topics;
        this.keys = new RecordKeys(b.keyColumns, b.objectKeyColumns);
        this.tombstones = b.tombstones;
        this.sender = sender;
        this.closeTimeout = b.closeTimeout;
        this.description = "KafkaDestination[" + topics + (b.transactionalId == null ? ""
                : ", transactional id " + b.transactionalId) + "]";
    }

    public static Builder builder() {
        return new Builder();
    }

    @Override
    public void deliver(ChangeBatch batch) {
        String topic = topics.of(batch);
        List<ProducerRecord<byte[], byte[]>> records = PageRecords.of(batch, topic, keys, tombstones);
        String what = description + ": page " + batch.pageNumber() + "/" + batch.pageCount() + " of object '"
                + batch.objectName() + "' (" + batch.idempotencyKey() + ", " + records.size()
                + " records) to topic '" + topic + "'";
        sender.send(records, what);
        LOG.debug("{} acknowledged", what);
    }

    /** Closes the producer, waiting at most {@link Builder#closeTimeout} for records still in flight. */
    @Override
    public void close() {
        sender.close(closeTimeout);
    }

    @Override
    public String toString() {
        return description;
    }

    /** Configuration; setters store, {@link #build()} checks everything at once and makes the producer. */
    public static final class Builder {
        private String bootstrapServers;
        private String topic;
        private String topicPattern;
        private Function<String, String> topicPerObject;
        private List<String> keyColumns = List.of();
        private final Map<String, List<String>> objectKeyColumns = new LinkedHashMap<>();
        private final Map<String, Object> producerProperties = new LinkedHashMap<>();
        private boolean tombstones;
        private String transactionalId;
        private Duration closeTimeout = DEFAULT_CLOSE_TIMEOUT;

        private Builder() {
        }

        /** {@code host:port} of one or more brokers, comma-separated; or set producer property bootstrap.servers. */
        public Builder bootstrapServers(String bootstrapServers) {
            this.bootstrapServers = bootstrapServers;
            return this;
        }

        /** Every object's records go to this topic. One of topic, topicPattern and topicPerObject is required. */
        public Builder topic(String topic) {
            this.topic = topic;
            return this;
        }

        /** Each object's records go to this pattern with {@code {object}} replaced by the object's name. */
        public Builder topicPattern(String pattern) {
            this.topicPattern = pattern;
            return this;
        }

        /** Each object's records go to the topic this function names for it (asked once per object). */
        public Builder topicPerObject(Function<String, String> naming) {
            this.topicPerObject = naming;
            return this;
        }

        /** The fields that make up the record key, in this order, for every object without its own. */
        public Builder keyColumns(String... columns) {
            this.keyColumns = columns == null ? null : Arrays.asList(columns);
            return this;
        }

        /** The record key's fields for one object, over {@link #keyColumns}. */
        public Builder objectKeyColumns(String object, String... columns) {
            this.objectKeyColumns.put(object, columns == null ? null : Arrays.asList(columns));
            return this;
        }

        /** One producer property (see Kafka's producer configuration); later calls win. */
        public Builder producerProperty(String name, Object value) {
            this.producerProperties.put(name, value);
            return this;
        }

        /** Several producer properties; later calls win. */
        public Builder producerProperties(Map<String, ?> properties) {
            if (properties == null) {
                this.producerProperties.put(null, null);
            } else {
                this.producerProperties.putAll(properties);
            }
            return this;
        }

        /** After each delete, also a record with the row's key and no value, for compacted topics. Default off. */
        public Builder tombstones(boolean tombstones) {
            this.tombstones = tombstones;
            return this;
        }

        /**
         * Makes each page one Kafka transaction under this id: all of it or none of it is visible to a
         * {@code read_committed} consumer. One id per running destination: a second producer with the same id
         * fences the first (kafka/README.md, "Transactions").
         */
        public Builder transactionalId(String transactionalId) {
            this.transactionalId = transactionalId;
            return this;
        }

        /** How long {@link KafkaDestination#close()} waits for records in flight. Default 30 s. */
        public Builder closeTimeout(Duration closeTimeout) {
            this.closeTimeout = closeTimeout;
            return this;
        }

        public KafkaDestination build() {
            Checks checks = Checks.of("KafkaDestination");
            TopicNames topics = topics(checks);
            keyColumns(checks);
            if (checks.notNull("closeTimeout", closeTimeout)) {
                checks.notNegative("closeTimeout", closeTimeout);
            }
            checks.that(!producerProperties.containsKey(null), "producer property names must not be null");
            Map<String, Object> props = ProducerSettings.of(withoutNullName(), bootstrapServers, transactionalId,
                    checks);
            checks.throwIfAny();
            Supplier<Producer<byte[], byte[]>> factory = () -> new KafkaProducer<>(props);
            Producer<byte[], byte[]> producer;
            try {
                producer = factory.get();
            } catch (KafkaException e) {
                // Kafka's own check of the properties (an unknown value, a bad number): its message names the property.
                checks.add("the producer refused its properties: " + e.getMessage()
                        + (e.getCause() != null ? " (" + e.getCause().getMessage() + ")" : ""));
                checks.throwIfAny();
                throw e;
            }
            PageSender sender = transactionalId == null ? new IdempotentSender(producer)
                    : new TransactionalSender(producer, factory, transactionalId);
            return new KafkaDestination(this, topics, sender);
        }

        private TopicNames topics(Checks checks) {
            int set = (topic != null ? 1 : 0) + (topicPattern != null ? 1 : 0) + (topicPerObject != null ? 1 : 0);
            checks.that(set == 1, "exactly one of topic, topicPattern and topicPerObject must be set, got " + set);
            if (topic != null) {
                checks.that(TopicNames.isLegal(topic), "topic '" + topic + "' is not a topic name Kafka accepts:"
                        + " 1 to 249 letters, digits, '.', '_' or '-'");
                return TopicNames.fixed(topic);
            }
            if (topicPattern != null) {
                checks.that(topicPattern.contains(TopicNames.OBJECT), "topicPattern '" + topicPattern
                        + "' must contain " + TopicNames.OBJECT + " (use topic(...) for one topic)");
                checks.that(TopicNames.isLegal(topicPattern.replace(TopicNames.OBJECT, "o")), "topicPattern '"
                        + topicPattern + "' gives no legal topic name: apart from " + TopicNames.OBJECT
                        + " only letters, digits, '.', '_' or '-'");
                return TopicNames.pattern(topicPattern);
            }
            return topicPerObject == null ? null : TopicNames.function(topicPerObject);
        }

        private void keyColumns(Checks checks) {
            if (checks.noNulls("keyColumns", keyColumns)) {
                checks.that(!keyColumns.isEmpty() || !objectKeyColumns.isEmpty(), "keyColumns must name at least"
                        + " one field (the record key that keeps a row's changes in one partition), or set"
                        + " objectKeyColumns for each object");
                checks.that(keyColumns.stream().distinct().count() == keyColumns.size(),
                        "keyColumns lists a field twice: " + keyColumns);
            }
            objectKeyColumns.forEach((object, columns) -> {
                checks.that(object != null, "objectKeyColumns: the object name must not be null");
                if (checks.noNulls("objectKeyColumns(" + object + ")", columns)) {
                    checks.that(!columns.isEmpty(), "objectKeyColumns(" + object + ") must name at least one field");
                    checks.that(columns.stream().distinct().count() == columns.size(),
                            "objectKeyColumns(" + object + ") lists a field twice: " + columns);
                }
            });
        }

        private Map<String, Object> withoutNullName() {
            Map<String, Object> copy = new LinkedHashMap<>(producerProperties);
            copy.remove(null);
            return copy;
        }
    }
}
