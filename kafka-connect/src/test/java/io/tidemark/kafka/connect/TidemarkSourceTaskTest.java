package io.tidemark.kafka.connect;

import io.tidemark.postgres.PostgresOutbox;
import io.tidemark.testing.EmbeddedPostgresTest;
import io.tidemark.testing.TestDatabase;
import org.apache.kafka.common.metrics.PluginMetrics;
import org.apache.kafka.connect.errors.ConnectException;
import org.apache.kafka.connect.errors.RetriableException;
import org.apache.kafka.connect.source.SourceRecord;
import org.apache.kafka.connect.source.SourceTaskContext;
import org.apache.kafka.connect.source.TransactionContext;
import org.apache.kafka.connect.storage.OffsetStorageReader;
import org.junit.jupiter.api.Test;

import java.util.ArrayList;
import java.util.Collection;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/**
 * How one task steps its objects, polled directly (no Connect worker) over the embedded PostgreSQL: with
 * connector-defined transaction boundaries an open {@code Full} export holds the task until it is finished, so each
 * transaction holds one object's records up to a version boundary; without them the objects take turns.
 */
@EmbeddedPostgresTest
class TidemarkSourceTaskTest {

    private static final int BIG_ROWS = 60;
    private static final int PAGE = 10;

    private final TestDatabase database;

    TidemarkSourceTaskTest(TestDatabase database) {
        this.database = database;
    }

    /** Two FULL objects in one task: Big exports {@value #BIG_ROWS} rows ({@value #PAGE} a poll), Small 3. */
    private Map<String, String> twoObjects(String prefix) {
        Map<String, String> overrides = new LinkedHashMap<>();
        overrides.put("tidemark.objects", "Big,Small");
        overrides.put("topic.prefix", prefix);
        overrides.put("page.size", Integer.toString(PAGE));
        overrides.put("poll.interval.ms", "60000");
        for (String name : List.of("Big", "Small")) {
            String table = prefix.replace(".", "") + "_" + name.toLowerCase();
            database.execute("CREATE TABLE public." + table + " (id int PRIMARY KEY, name text)");
            PostgresOutbox outbox = PostgresOutbox.forTable("public." + table).build();
            outbox.install(database.dataSource());
            database.execute("INSERT INTO public." + table + " SELECT g, 'row ' || g FROM generate_series(1, "
                    + (name.equals("Big") ? BIG_ROWS : 3) + ") g");
            overrides.put("object." + name + ".procedure", outbox.changeFunction());
            overrides.put("object." + name + ".key", "id");
            overrides.put("object." + name + ".initial.sync", "FULL");
        }
        Map<String, String> props = ConnectTestCluster.readmeConfig(database.jdbcUrl(), overrides);
        props.put(TidemarkSourceConfig.TASK_OBJECTS, "Big,Small");
        return props;
    }

    /** Polls until both exports are handed out; each poll's records, in order. */
    private static List<List<SourceRecord>> pollBoth(TidemarkSourceTask task) throws InterruptedException {
        List<List<SourceRecord>> polls = new ArrayList<>();
        int records = 0;
        for (int i = 0; i < 100 && records < BIG_ROWS + 3; i++) {
            List<SourceRecord> batch = task.poll();
            if (batch != null) {
                polls.add(batch);
                records += batch.size();
            }
        }
        assertThat(records).as("records of both exports").isEqualTo(BIG_ROWS + 3);
        return polls;
    }

    private static String topicOf(List<SourceRecord> poll) {
        assertThat(poll).extracting(SourceRecord::topic).as("one object per poll").containsOnly(poll.get(0).topic());
        return poll.get(0).topic();
    }

    @Test
    void with_connector_boundaries_a_full_export_holds_the_task_and_commits_once_at_its_end() throws Exception {
        Recording transactions = new Recording();
        TidemarkSourceTask task = new TidemarkSourceTask();
        task.initialize(new Context(transactions));
        task.start(twoObjects("tx."));
        try {
            List<List<SourceRecord>> polls = pollBoth(task);

            List<String> topics = polls.stream().map(TidemarkSourceTaskTest::topicOf).toList();
            assertThat(topics).as("Big's export over several polls, then Small's")
                    .containsExactly("tx.Big", "tx.Big", "tx.Big", "tx.Big", "tx.Big", "tx.Big", "tx.Small");
            List<SourceRecord> big = polls.stream().filter(p -> topicOf(p).equals("tx.Big"))
                    .flatMap(List::stream).toList();
            // one commit for the whole export, at its last record; one for Small's export
            assertThat(transactions.committedOn).containsExactly(big.get(big.size() - 1),
                    polls.get(polls.size() - 1).get(2));
        } finally {
            task.stop();
        }
    }

    @Test
    void without_connector_boundaries_the_objects_take_turns_during_a_long_export() throws Exception {
        TidemarkSourceTask task = new TidemarkSourceTask();
        task.initialize(new Context(null));
        task.start(twoObjects("turns."));
        try {
            List<String> topics = pollBoth(task).stream().map(TidemarkSourceTaskTest::topicOf).toList();

            assertThat(topics).as("Small is served between the polls of Big's export")
                    .startsWith("turns.Big", "turns.Small", "turns.Big");
            assertThat(topics).filteredOn("turns.Big"::equals).hasSize(BIG_ROWS / PAGE);
        } finally {
            task.stop();
        }
    }

    @Test
    void a_failure_inside_an_export_fails_the_task_without_committing_any_of_it() throws Exception {
        // A hand-written procedure whose Full export has a row without the key column in its third page.
        database.execute("""
                CREATE FUNCTION public.keyless_changes(request json) RETURNS json LANGUAGE sql AS $$
                  SELECT json_build_object('Metadata', json_build_object('Sync',
                           json_build_object('Version', 7, 'Type', 'Full')),
                         'Data', json_agg(CASE WHEN g = 25 THEN json_build_object('name', 'no key')
                                          ELSE json_build_object('id', g, 'name', 'row') END ORDER BY g))
                  FROM generate_series(1, 30) g
                $$""");
        Map<String, String> overrides = new LinkedHashMap<>();
        overrides.put("tidemark.objects", "Keyless");
        overrides.put("page.size", Integer.toString(PAGE));
        overrides.put("object.Keyless.procedure", "public.keyless_changes");
        overrides.put("object.Keyless.key", "id");
        overrides.put("object.Keyless.initial.sync", "FULL");
        Map<String, String> props = ConnectTestCluster.readmeConfig(database.jdbcUrl(), overrides);
        props.put(TidemarkSourceConfig.TASK_OBJECTS, "Keyless");
        Recording transactions = new Recording();
        TidemarkSourceTask task = new TidemarkSourceTask();
        task.initialize(new Context(transactions));
        task.start(props);
        try {
            assertThat(task.poll()).hasSize(PAGE);
            assertThat(task.poll()).hasSize(PAGE);

            assertThatThrownBy(task::poll).isInstanceOf(ConnectException.class)
                    .isNotInstanceOf(RetriableException.class)
                    .hasMessageContaining("Keyless").hasMessageContaining("no key column 'id'");
            assertThat(transactions.committedOn).as("no part of the export committed").isEmpty();
        } finally {
            task.stop();
        }
    }

    /** What a worker gives a task: no committed offsets, and the transaction context (null: not connector-defined). */
    private record Context(TransactionContext transactions) implements SourceTaskContext {

        @Override
        public Map<String, String> configs() {
            return Map.of();
        }

        @Override
        public OffsetStorageReader offsetStorageReader() {
            return new OffsetStorageReader() {
                @Override
                public <T> Map<String, Object> offset(Map<String, T> partition) {
                    return null;
                }

                @Override
                public <T> Map<Map<String, T>, Map<String, Object>> offsets(Collection<Map<String, T>> partitions) {
                    return new HashMap<>();
                }
            };
        }

        @Override
        public TransactionContext transactionContext() {
            return transactions;
        }

        @Override
        public PluginMetrics pluginMetrics() {
            throw new UnsupportedOperationException("the task reports no metrics");
        }
    }

    /** The records a task asked Connect to commit a transaction on; aborting is not expected. */
    private static final class Recording implements TransactionContext {
        final List<SourceRecord> committedOn = new ArrayList<>();

        @Override
        public void commitTransaction() {
            throw new AssertionError("the task commits on a record, never on the batch");
        }

        @Override
        public void commitTransaction(SourceRecord record) {
            committedOn.add(record);
        }

        @Override
        public void abortTransaction() {
            throw new AssertionError("no transaction is aborted");
        }

        @Override
        public void abortTransaction(SourceRecord record) {
            throw new AssertionError("no transaction is aborted");
        }
    }
}
