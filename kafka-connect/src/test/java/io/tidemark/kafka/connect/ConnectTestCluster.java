package io.tidemark.kafka.connect;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.common.PartitionInfo;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.header.Header;
import org.apache.kafka.connect.runtime.rest.entities.ConnectorStateInfo;
import org.apache.kafka.connect.util.clusters.EmbeddedConnectCluster;
import org.apache.kafka.connect.util.clusters.WorkerHandle;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.function.Predicate;

/**
 * A real Kafka broker and Connect cluster in the test JVM (Kafka's own {@link EmbeddedConnectCluster}), with
 * exactly-once source support enabled on every worker, and the helpers the connector tests read topics with.
 */
final class ConnectTestCluster implements AutoCloseable {

    static final ObjectMapper JSON = new ObjectMapper();

    final EmbeddedConnectCluster connect;

    ConnectTestCluster(int workers) {
        Properties broker = new Properties();
        broker.put("transaction.state.log.replication.factor", "1");
        broker.put("transaction.state.log.min.isr", "1");
        broker.put("offsets.topic.replication.factor", "1");
        broker.put("auto.create.topics.enable", "true");
        Map<String, String> worker = new HashMap<>();
        worker.put("exactly.once.source.support", "enabled");
        // A stopped worker's tasks move to the others within seconds, not after the default five minutes.
        worker.put("scheduled.rebalance.max.delay.ms", "2000");
        worker.put("offset.flush.interval.ms", "500");
        connect = new EmbeddedConnectCluster.Builder()
                .name("tidemark-connect")
                .numWorkers(workers)
                .numBrokers(1)
                .brokerProps(broker)
                .workerProps(worker)
                .build();
        connect.start();
    }

    /** The README's configuration, pointed at {@code jdbcUrl} and the given objects' settings. */
    static Map<String, String> readmeConfig(String jdbcUrl, Map<String, String> overrides) {
        Map<String, String> config = ReadmeConfig.load();
        config.keySet().removeIf(key -> key.startsWith("object.") || key.startsWith("connection."));
        config.put("connection.url", jdbcUrl);
        config.putAll(overrides);
        return config;
    }

    void start(String name, Map<String, String> config, int tasks) {
        connect.configureConnector(name, config);
        await("connector " + name + " running with " + tasks + " tasks", () -> {
            ConnectorStateInfo status = connect.connectorStatus(name);
            return status.connector().state().equals("RUNNING") && status.tasks().size() == tasks
                    && status.tasks().stream().allMatch(t -> t.state().equals("RUNNING"));
        });
    }

    /** The id ({@code host:port}) of the worker running the connector's task {@code task}, as Connect reports it. */
    String workerIdOf(String connector, int task) {
        return connect.connectorStatus(connector).tasks().stream().filter(t -> t.id() == task)
                .findFirst().orElseThrow().workerId();
    }

    /** Whether {@code workerId} is the worker of {@code handle}. */
    static boolean is(String workerId, WorkerHandle handle) {
        return workerId.endsWith(":" + handle.url().getPort());
    }

    /** The worker running the connector's task {@code task}. */
    WorkerHandle workerOf(String connector, int task) {
        String workerId = workerIdOf(connector, task);
        return connect.workers().stream()
                .filter(w -> is(workerId, w))
                .findFirst().orElseThrow(() -> new AssertionError("no worker " + workerId + " among "
                        + connect.workers()));
    }

    /**
     * A record as a sink sees it: key, value (parsed JSON, null for a tombstone) and headers, and where it lies
     * (partition and offset: a transaction's commit marker takes an offset, so a gap between two records of one
     * task is a transaction boundary).
     */
    record Received(String key, JsonNode value, Map<String, String> headers, int partition, long offset) {

        String operation() {
            return value.get("operation").asText();
        }

        JsonNode row() {
            try {
                return JSON.readTree(value.get("row").asText());
            } catch (IOException e) {
                throw new UncheckedIOException(e);
            }
        }
    }

    /** Every committed record of the topic now (read_committed), in offset order per partition. */
    List<Received> readAll(String topic) {
        Map<String, Object> props = new HashMap<>();
        props.put(ConsumerConfig.ISOLATION_LEVEL_CONFIG, "read_committed");
        props.put(ConsumerConfig.AUTO_OFFSET_RESET_CONFIG, "earliest");
        props.put(ConsumerConfig.GROUP_ID_CONFIG, "reader-" + System.nanoTime());
        List<Received> out = new ArrayList<>();
        try (KafkaConsumer<byte[], byte[]> consumer = connect.kafka().createConsumer(props)) {
            List<PartitionInfo> infos = consumer.partitionsFor(topic, Duration.ofSeconds(10));
            if (infos == null || infos.isEmpty()) {
                return out;
            }
            List<TopicPartition> partitions = infos.stream()
                    .map(i -> new TopicPartition(topic, i.partition())).toList();
            consumer.assign(partitions);
            consumer.seekToBeginning(partitions);
            Map<TopicPartition, Long> end = consumer.endOffsets(partitions);
            long deadline = System.nanoTime() + Duration.ofSeconds(30).toNanos();
            while (partitions.stream().anyMatch(p -> consumer.position(p) < end.get(p))) {
                if (System.nanoTime() > deadline) {
                    throw new AssertionError("could not read " + topic + " to its end");
                }
                for (ConsumerRecord<byte[], byte[]> r : consumer.poll(Duration.ofMillis(200))) {
                    out.add(received(r));
                }
            }
        }
        return out;
    }

    private static Received received(ConsumerRecord<byte[], byte[]> r) {
        Map<String, String> headers = new LinkedHashMap<>();
        for (Header h : r.headers()) {
            headers.put(h.key(), h.value() == null ? null : new String(h.value(), StandardCharsets.UTF_8));
        }
        try {
            return new Received(r.key() == null ? null : new String(r.key(), StandardCharsets.UTF_8),
                    r.value() == null ? null : JSON.readTree(r.value()), headers, r.partition(), r.offset());
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    /** Reads the topic until {@code done} holds for its records (or fails after a minute). */
    List<Received> readUntil(String topic, Predicate<List<Received>> done) {
        long deadline = System.nanoTime() + Duration.ofSeconds(60).toNanos();
        List<Received> records = readAll(topic);
        while (!done.test(records)) {
            if (System.nanoTime() > deadline) {
                throw new AssertionError("topic " + topic + " never reached the expected records; it holds "
                        + records.size() + ": " + records);
            }
            sleep(200);
            records = readAll(topic);
        }
        return records;
    }

    static void await(String what, java.util.function.BooleanSupplier condition) {
        long deadline = System.nanoTime() + Duration.ofSeconds(60).toNanos();
        while (true) {
            try {
                if (condition.getAsBoolean()) {
                    return;
                }
            } catch (RuntimeException e) {
                // not there yet (a REST call during a rebalance)
            }
            if (System.nanoTime() > deadline) {
                throw new AssertionError("timed out waiting for " + what);
            }
            sleep(200);
        }
    }

    static void sleep(long millis) {
        try {
            Thread.sleep(millis);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new AssertionError(e);
        }
    }

    @Override
    public void close() {
        connect.stop();
    }
}
