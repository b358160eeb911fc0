package io.tidemark.kafka;

import kafka.server.BrokerServer;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.NewTopic;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.serialization.ByteArrayDeserializer;
import org.apache.kafka.common.test.KafkaClusterTestKit;
import org.apache.kafka.common.test.TestKitNodes;

import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.function.Predicate;

/**
 * A real Kafka cluster in this JVM, from Kafka's own test kit: one KRaft controller and one broker, separate, so
 * the broker can be stopped and started again (on the same port) while the controller keeps the metadata. Started
 * once per test class; every test uses topics of its own.
 */
final class InProcessKafka implements AutoCloseable {

    private final KafkaClusterTestKit cluster;

    private InProcessKafka(KafkaClusterTestKit cluster) {
        this.cluster = cluster;
    }

    static InProcessKafka start() throws Exception {
        KafkaClusterTestKit cluster = new KafkaClusterTestKit.Builder(new TestKitNodes.Builder()
                .setCombined(false)
                .setNumControllerNodes(1)
                .setNumBrokerNodes(1)
                .build())
                // One broker: the internal topics (transactions, offsets) cannot have more replicas than that.
                .setConfigProp("offsets.topic.replication.factor", "1")
                .setConfigProp("offsets.topic.num.partitions", "1")
                .setConfigProp("transaction.state.log.replication.factor", "1")
                .setConfigProp("transaction.state.log.min.isr", "1")
                .setConfigProp("transaction.state.log.num.partitions", "1")
                .setConfigProp("group.initial.rebalance.delay.ms", "0")
                // A restarted broker re-registers once the controller expired its old session: keep that short.
                .setConfigProp("broker.session.timeout.ms", "2000")
                .setConfigProp("broker.heartbeat.interval.ms", "300")
                .build();
        try {
            cluster.format();
            cluster.startup();
            cluster.waitForReadyBrokers();
        } catch (Exception e) {
            cluster.close();
            throw e;
        }
        return new InProcessKafka(cluster);
    }

    String bootstrapServers() {
        return cluster.bootstrapServers();
    }

    void createTopic(String topic, int partitions) throws Exception {
        try (Admin admin = cluster.admin()) {
            admin.createTopics(List.of(new NewTopic(topic, partitions, (short) 1))).all().get();
        }
    }

    private BrokerServer broker() {
        return cluster.brokers().values().iterator().next();
    }

    /** Stops the broker (the controller keeps running); producers see it unreachable. */
    void stopBroker() {
        BrokerServer broker = broker();
        broker.shutdown();
        broker.awaitShutdown();
    }

    /** Starts the stopped broker again, on the same port, with the same logs. */
    void startBroker() throws Exception {
        broker().startup();
        cluster.waitForReadyBrokers();
    }

    /**
     * Reads {@code topic} from the beginning until {@code done} holds for what was read or {@code timeout} passes;
     * {@code readCommitted} reads only committed transactions.
     */
    List<ConsumerRecord<byte[], byte[]>> read(String topic, boolean readCommitted, Duration timeout,
                                              Predicate<List<ConsumerRecord<byte[], byte[]>>> done) {
        List<ConsumerRecord<byte[], byte[]>> records = new ArrayList<>();
        try (KafkaConsumer<byte[], byte[]> consumer = new KafkaConsumer<>(Map.of(
                ConsumerConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrapServers(),
                ConsumerConfig.ISOLATION_LEVEL_CONFIG, readCommitted ? "read_committed" : "read_uncommitted",
                ConsumerConfig.KEY_DESERIALIZER_CLASS_CONFIG, ByteArrayDeserializer.class.getName(),
                ConsumerConfig.VALUE_DESERIALIZER_CLASS_CONFIG, ByteArrayDeserializer.class.getName()))) {
            List<TopicPartition> partitions = consumer.partitionsFor(topic).stream()
                    .map(p -> new TopicPartition(topic, p.partition())).toList();
            consumer.assign(partitions);
            consumer.seekToBeginning(partitions);
            Instant deadline = Instant.now().plus(timeout);
            while (!done.test(records) && Instant.now().isBefore(deadline)) {
                consumer.poll(Duration.ofMillis(200)).forEach(records::add);
            }
        }
        return records;
    }

    /** Reads {@code topic} until {@code count} records arrived, then a little longer to catch any extra. */
    List<ConsumerRecord<byte[], byte[]>> readAll(String topic, boolean readCommitted, int count) {
        List<ConsumerRecord<byte[], byte[]>> records = read(topic, readCommitted, Duration.ofSeconds(60),
                r -> r.size() >= count);
        List<ConsumerRecord<byte[], byte[]>> settled = read(topic, readCommitted, Duration.ofMillis(1500),
                r -> r.size() > records.size());
        return settled.size() > records.size() ? settled : records;
    }

    Set<String> topics() throws Exception {
        try (Admin admin = cluster.admin()) {
            return admin.listTopics().names().get();
        }
    }

    @Override
    public void close() throws Exception {
        cluster.close();
    }
}
