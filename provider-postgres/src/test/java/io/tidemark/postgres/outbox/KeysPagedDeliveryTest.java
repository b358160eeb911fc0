package io.tidemark.postgres.outbox;

import io.tidemark.postgres.CaptureShape;
import io.tidemark.sync.Change;
import io.tidemark.sync.InitialSync;
import io.tidemark.sync.JdbcWatermarkStore;
import io.tidemark.sync.Operation;
import io.tidemark.sync.Outcome;
import io.tidemark.sync.SyncEngine;
import io.tidemark.testing.EmbeddedPostgresTest;
import io.tidemark.testing.RecordingDestination;
import io.tidemark.testing.TestDatabase;
import org.junit.jupiter.api.Test;

import java.util.List;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * An outbox of keys read by the engine one change per page: the engine stores a position between two pages, and a
 * key's earlier changes folded into its element must not lie below that position while the element is undelivered.
 */
@EmbeddedPostgresTest
class KeysPagedDeliveryTest {

    private final TestDatabase database;

    KeysPagedDeliveryTest(TestDatabase database) {
        this.database = database;
    }

    /**
     * Key 1 is inserted, key 2 updated, then key 1 updated, each in its own transaction. The destination takes the
     * first page and refuses the second, then recovers: key 1 must reach it as an insert of the whole row (with the
     * last version as a key's version, the position after key 2's page passed key 1's insert, and key 1 came back
     * as an update of a row the destination never had).
     */
    @Test
    void a_refused_second_page_then_recovery_delivers_every_key_with_every_change() {
        OutboxTables t = OutboxTables.create(CaptureShape.KEYS, database, "paged", "id int PRIMARY KEY, name text, qty int");
        database.execute("INSERT INTO public." + t.table + " VALUES (2, 'b', 1)");
        RecordingDestination out = new RecordingDestination();
        try (SyncEngine engine = OutboxTables.engine(database, "paged", JdbcWatermarkStore.create(database.dataSource()), out)
                .track(t.outbox.track("Paged").initialSync(InitialSync.INCREMENTAL).pageSize(1))
                .build()) {
            assertThat(engine.runOnce().get("Paged").outcome()).isEqualTo(Outcome.SEEDED);
            database.execute("INSERT INTO public." + t.table + " VALUES (1, 'a', 1)");
            database.execute("UPDATE public." + t.table + " SET name = 'b2' WHERE id = 2");
            database.execute("UPDATE public." + t.table + " SET qty = 5 WHERE id = 1");

            out.refuseWhen(batch -> batch.pageNumber() == 2);
            engine.runOnce();
            assertThat(out.changes()).as("the first page only").hasSize(1);
            out.acceptAll();
            for (int i = 0; i < 3; i++) {
                engine.runOnce();
            }

            List<Change> received = out.changes();
            Change firstOfKey1 = received.stream().filter(c -> c.fields().get("id").asInt() == 1).findFirst()
                    .orElseThrow(() -> new AssertionError("key 1 never arrived: " + received));
            assertThat(firstOfKey1.operation()).hasValue(Operation.INSERT);
            assertThat(firstOfKey1.fields().toString()).isEqualTo("{\"id\":1,\"name\":\"a\",\"qty\":5}");
            Change lastOfKey2 = received.stream().filter(c -> c.fields().get("id").asInt() == 2)
                    .reduce((a, b) -> b).orElseThrow(() -> new AssertionError("key 2 never arrived: " + received));
            assertThat(lastOfKey2.fields().get("name").asText()).isEqualTo("b2");
            assertThat(engine.runOnce().get("Paged").outcome()).isEqualTo(Outcome.NO_CHANGES);
        }
    }
}
