package io.tidemark.benchmarks.connect;

import io.tidemark.postgres.PostgresOutbox;
import io.tidemark.postgres.PostgresProvider;
import io.tidemark.sync.InMemoryWatermarkStore;
import io.tidemark.sync.InitialSync;
import io.tidemark.sync.SyncEngine;
import io.tidemark.sync.TrackedObject;
import io.tidemark.testing.EmbeddedPostgresServer;
import io.tidemark.testing.TestDatabase;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.connect.runtime.rest.entities.CreateConnectorRequest;
import org.apache.kafka.connect.util.clusters.EmbeddedConnectCluster;

import java.sql.Connection;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.Instant;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.OptionalLong;
import java.util.Properties;
import java.util.concurrent.atomic.AtomicLong;

/**
 * Changes per second from a generated outbox to a Kafka topic through the Tidemark source connector (one task on a
 * real in-process Kafka and Connect cluster, JSON converter), against the engine with a counting destination over
 * the very same changes, in the same run. Rounds alternate connector and engine; each round reads all changes from
 * the same starting version (the connector's offset is set to it before the round, the engine's watermark too).
 * The connector's rate is counted from its first record in the topic (the task's start, a Connect rebalance, is
 * printed apart); the engine's from its first cycle.
 *
 * <p>Usage: {@code ConnectorThroughputBenchmark <changes> <rounds>}.
 */
public final class ConnectorThroughputBenchmark {

    private ConnectorThroughputBenchmark() {
    }

    public static void main(String[] args) throws Exception {
        int changes = args.length > 0 ? Integer.parseInt(args[0]) : 100_000;
        int rounds = args.length > 1 ? Integer.parseInt(args[1]) : 5;
        Properties broker = new Properties();
        broker.put("auto.create.topics.enable", "true");
        broker.put("num.partitions", "1");
        EmbeddedConnectCluster connect = new EmbeddedConnectCluster.Builder().name("bench").numWorkers(1)
                .numBrokers(1).brokerProps(broker).workerProps(new HashMap<>(Map.of("offset.flush.interval.ms", "1000"))).build();
        connect.start();
        try (TestDatabase database = EmbeddedPostgresServer.shared().createDatabase()) {
            database.execute("CREATE TABLE public.bench_items (id bigint PRIMARY KEY, name text, qty int,"
                    + " price numeric(12,2), updated timestamptz)");
            PostgresOutbox outbox = PostgresOutbox.forTable("public.bench_items").build();
            outbox.install(database.dataSource());
            TrackedObject object = TrackedObject.of("Bench", outbox.changeFunction())
                    .initialSync(InitialSync.INCREMENTAL);
            PostgresProvider provider = PostgresProvider.builder(database.dataSource()).listen(false).build();
            String source = provider.sourceIdentity(object);
            long start = seed(database, outbox.changeFunction());
            for (int from = 1; from <= changes; from += 100) {
                database.execute("INSERT INTO public.bench_items SELECT g, 'item ' || g, g % 100, g * 1.25, now()"
                        + " FROM generate_series(" + from + ", " + Math.min(changes, from + 99) + ") g");
            }
            System.out.printf("%d changes in transactions of 100 rows, from version %d; %d rounds%n", changes, start,
                    rounds);
            List<Double> viaConnector = new ArrayList<>();
            List<Double> viaEngine = new ArrayList<>();
            for (int round = 0; round <= rounds; round++) {
                boolean connectorFirst = round % 2 == 0;
                double c = 0;
                double e = 0;
                for (int leg = 0; leg < 2; leg++) {
                    if (leg == 0 == connectorFirst) {
                        c = connector(connect, database, object, source, start, changes, round);
                    } else {
                        e = engine(provider, object, source, start, changes);
                    }
                }
                if (round == 0) {
                    System.out.printf("warm-up: connector %.0f/s, engine %.0f/s%n", c, e);
                    continue;
                }
                viaConnector.add(c);
                viaEngine.add(e);
                System.out.printf("round %d: connector %.0f changes/s, engine %.0f changes/s%n", round, c, e);
            }
            double mc = median(viaConnector);
            double me = median(viaEngine);
            System.out.printf("median: connector %.0f changes/s, engine (counting destination) %.0f changes/s,"
                    + " connector/engine %.2f%n", mc, me, mc / me);
        } finally {
            connect.stop();
        }
    }

    /** One run through the connector: offset set to {@code start}, then resumed, timed until the topic holds all. */
    private static double connector(EmbeddedConnectCluster connect, TestDatabase database, TrackedObject object,
                                    String source, long start, int changes, int round) throws Exception {
        String name = "bench-" + round;
        String topic = "bench" + round + ".Bench";
        Map<String, String> config = new HashMap<>();
        config.put("connector.class", "io.tidemark.kafka.connect.TidemarkSourceConnector");
        config.put("tasks.max", "1");
        config.put("connection.url", database.jdbcUrl());
        config.put("tidemark.objects", "Bench");
        config.put("object.Bench.procedure", object.procedure());
        config.put("object.Bench.key", "id");
        config.put("topic.prefix", "bench" + round + ".");
        config.put("listen", "false");
        config.put("poll.interval.ms", "100");
        config.put("key.converter", "org.apache.kafka.connect.storage.StringConverter");
        config.put("value.converter", "org.apache.kafka.connect.json.JsonConverter");
        config.put("value.converter.schemas.enable", "false");
        // Larger producer batches than Connect's default (linger 0): the usual tuning of a high-volume source.
        config.put("producer.override.linger.ms", "5");
        config.put("producer.override.batch.size", "262144");
        config.put("name", name);
        connect.configureConnector(new CreateConnectorRequest(name, config, CreateConnectorRequest.InitialState.STOPPED));
        waitFor(() -> "STOPPED".equals(connect.connectorStatus(name).connector().state()));
        Map<String, Object> offset = new HashMap<>();
        offset.put("version", start);
        offset.put("source", source);
        connect.alterSourceConnectorOffset(name, Map.of("object", object.name()), offset);
        connect.kafka().createTopic(topic, 1);
        long began = System.nanoTime();
        connect.resumeConnector(name);
        TopicPartition partition = new TopicPartition(topic, 0);
        long first;
        while ((first = connect.kafka().endOffset(partition)) == 0) {
            Thread.sleep(2);
        }
        long firstAt = System.nanoTime();
        while (connect.kafka().endOffset(partition) < changes) {
            Thread.sleep(2);
        }
        long done = System.nanoTime();
        connect.deleteConnector(name);
        System.out.printf("  connector: task start to first record %.2f s, then %.0f changes/s%n",
                (firstAt - began) / 1e9, (changes - first) / ((done - firstAt) / 1e9));
        return (changes - first) / ((done - firstAt) / 1e9);
    }

    /** One run through the engine with a destination that counts, from the same version. */
    private static double engine(PostgresProvider provider, TrackedObject object, String source, long start,
                                 int changes) throws Exception {
        InMemoryWatermarkStore store = InMemoryWatermarkStore.create();
        store.advance(object.name(), source, OptionalLong.empty(), start, Instant.now());
        AtomicLong counted = new AtomicLong();
        try (SyncEngine engine = SyncEngine.builder().provider(provider).watermarks(store).track(object)
                .destination("count", batch -> counted.addAndGet(batch.changes().size())).build()) {
            long began = System.nanoTime();
            while (counted.get() < changes) {
                engine.runOnce();
            }
            return changes / ((System.nanoTime() - began) / 1e9);
        }
    }

    private static long seed(TestDatabase database, String function) throws SQLException {
        try (Connection c = database.dataSource().getConnection(); Statement s = c.createStatement();
             ResultSet rs = s.executeQuery("SELECT " + function + "('{\"fromVersion\":0,\"mode\":\"seed\"}')"
                     + " #>> '{Metadata,Sync,Version}'")) {
            rs.next();
            return rs.getLong(1);
        }
    }

    private static void waitFor(java.util.function.BooleanSupplier condition) throws InterruptedException {
        long deadline = System.nanoTime() + 60_000_000_000L;
        while (true) {
            try {
                if (condition.getAsBoolean()) {
                    return;
                }
            } catch (RuntimeException notYet) {
                // the REST resource does not exist yet
            }
            if (System.nanoTime() > deadline) {
                throw new IllegalStateException("timed out");
            }
            Thread.sleep(100);
        }
    }

    private static double median(List<Double> values) {
        List<Double> sorted = values.stream().sorted().toList();
        int n = sorted.size();
        return n % 2 == 1 ? sorted.get(n / 2) : (sorted.get(n / 2 - 1) + sorted.get(n / 2)) / 2;
    }
}
