package io.tidemark.postgres;

import io.tidemark.sync.InitialSync;
import io.tidemark.sync.JdbcWatermarkStore;
import io.tidemark.sync.Outcome;
import io.tidemark.sync.SyncEngine;
import io.tidemark.sync.TrackedObject;
import io.tidemark.testing.EmbeddedPostgresTest;
import io.tidemark.testing.RecordingDestination;
import io.tidemark.testing.TestDatabase;
import org.junit.jupiter.api.Test;

import java.util.List;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * What one cycle costs the database, statement by statement: the engine runs a cycle per notified commit while
 * changes flow, so each statement here is paid up to hundreds of times a second (see the README's "What an engine
 * costs the database"). A cycle reads the store in one statement and no transaction, calls the change function
 * once, and writes positions and watermark in one transaction, only when they move.
 */
@EmbeddedPostgresTest
class CycleStatementsTest {

    private static final String READ = "SELECT s.object_name, s.version, s.source_identity, s.paused,";
    private static final String UPDATE_POSITIONS = "UPDATE \"tidemark\".\"sync_state_positions\" SET version = ?";
    private static final String UPDATE_WATERMARK = "UPDATE \"tidemark\".\"sync_state\" SET version = ?";

    private final TestDatabase database;

    CycleStatementsTest(TestDatabase database) {
        this.database = database;
    }

    @Test
    void a_cycle_delivering_a_change_reads_once_calls_once_and_writes_in_one_transaction() {
        database.execute("CREATE TABLE public.items (id bigint PRIMARY KEY, note text NOT NULL)");
        PostgresOutbox outbox = PostgresOutbox.forTable("public.items").build();
        outbox.install(database.dataSource());
        StatementLog log = new StatementLog(database.dataSource());
        try (SyncEngine engine = engine(log, outbox.track("Items").initialSync(InitialSync.INCREMENTAL))) {
            engine.runOnce("Items"); // seeds
            database.execute("INSERT INTO public.items VALUES (1, 'first')");
            engine.runOnce("Items"); // the first delivery stores the destination's position

            database.execute("INSERT INTO public.items VALUES (2, 'second')");
            log.start();
            Outcome outcome = engine.runOnce("Items").outcome();
            List<String> sent = log.stop();

            assertThat(outcome).isEqualTo(Outcome.DELIVERED);
            assertThat(sent).hasSize(6);
            assertThat(sent.get(0)).as("the store read, one statement outside a transaction").startsWith(READ);
            assertThat(sent.get(1)).isEqualTo("SELECT \"public\".\"items_changes\"(?::json)");
            assertThat(sent.subList(2, 6)).as("positions and watermark, together").satisfiesExactly(
                    begin -> assertThat(begin).isEqualTo("BEGIN"),
                    positions -> assertThat(positions).startsWith(UPDATE_POSITIONS),
                    watermark -> assertThat(watermark).startsWith(UPDATE_WATERMARK),
                    commit -> assertThat(commit).isEqualTo("COMMIT"));
        }
    }

    @Test
    void a_cycle_finding_nothing_new_at_the_stored_version_reads_once_calls_once_and_writes_nothing() {
        database.execute("""
                CREATE FUNCTION public.still_changes(payload json) RETURNS json LANGUAGE sql AS $$
                  SELECT '{"Metadata":{"Sync":{"Version":5,"Type":"Diff","ReasonCode":0}},"Data":[]}'::json
                $$""");
        StatementLog log = new StatementLog(database.dataSource());
        try (SyncEngine engine = engine(log, TrackedObject.of("Still", "public.still_changes"))) {
            engine.runOnce("Still"); // stores version 5 and the destination's position

            log.start();
            Outcome outcome = engine.runOnce("Still").outcome();
            List<String> sent = log.stop();

            assertThat(outcome).isEqualTo(Outcome.NO_CHANGES);
            assertThat(sent).satisfiesExactly(
                    read -> assertThat(read).startsWith(READ),
                    call -> assertThat(call).isEqualTo("SELECT \"public\".\"still_changes\"(?::json)"));
        }
    }

    private static SyncEngine engine(StatementLog log, TrackedObject object) {
        return SyncEngine.builder()
                .name("statements")
                .provider(PostgresProvider.builder(log).listen(false).build())
                .watermarks(JdbcWatermarkStore.create(log))
                .track(object)
                .destination("out", new RecordingDestination())
                .build();
    }
}
