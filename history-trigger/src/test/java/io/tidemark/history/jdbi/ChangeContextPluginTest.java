package io.tidemark.history.jdbi;

import io.tidemark.history.ChangeContext;
import io.tidemark.history.Db;
import io.tidemark.history.InvariantsAfterEach;
import io.tidemark.history.RoundTripCounter;
import io.tidemark.history.TemporalTable;
import io.tidemark.testing.EmbeddedPostgresTest;
import io.tidemark.testing.TestDatabase;
import org.jdbi.v3.core.Jdbi;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

import javax.sql.DataSource;
import java.util.List;
import java.util.Map;
import java.util.concurrent.atomic.AtomicReference;

import static org.assertj.core.api.Assertions.assertThat;

/** The JDBI plugin pushes the current unit of work's context automatically, without an extra round trip. */
@EmbeddedPostgresTest
@ExtendWith(InvariantsAfterEach.class)
class ChangeContextPluginTest {

    private final TestDatabase db;
    private final DataSource ds;

    ChangeContextPluginTest(TestDatabase db) {
        this.db = db;
        this.ds = db.dataSource();
    }

    @BeforeAll
    static void install(DataSource ds) {
        Db.exec(ds, "CREATE TABLE notes (id bigserial PRIMARY KEY, body text NOT NULL)");
        TemporalTable.forTable("notes").build().install(ds);
    }

    private List<Map<String, Object>> history(long id) {
        return Db.rows(ds, "SELECT operation, changed_by, reason FROM notes_history WHERE id = ?"
                + " ORDER BY valid_from, valid_to, history_id", id);
    }

    @Test
    void updates_queries_and_generated_keys_carry_the_current_context() {
        Jdbi jdbi = Jdbi.create(ds).installPlugin(ChangeContextPlugin.create());
        ChangeContext alice = ChangeContext.builder().changedBy("alice").reason("import").build();
        long id = ChangeContext.callWith(alice, () -> jdbi.withHandle(h -> h.createUpdate(
                "INSERT INTO notes (body) VALUES (:body)").bind("body", "first")
                .executeAndReturnGeneratedKeys("id").mapTo(Long.class).one()));
        int updated = ChangeContext.callWith(ChangeContext.changedBy("bob"), () -> jdbi.withHandle(h ->
                h.createUpdate("UPDATE notes SET body = :body WHERE id = :id").bind("body", "second").bind("id", id)
                        .execute()));
        String body = ChangeContext.callWith(ChangeContext.changedBy("carol"), () -> jdbi.withHandle(h ->
                h.createQuery("UPDATE notes SET body = 'third' WHERE id = :id RETURNING body").bind("id", id)
                        .mapTo(String.class).one()));
        assertThat(updated).isEqualTo(1);
        assertThat(body).isEqualTo("third");
        assertThat(history(id)).extracting(r -> r.get("changed_by")).containsExactly("alice", "bob", "carol");
        assertThat(history(id).get(0)).containsEntry("reason", "import");
        assertThat(history(id).get(1)).as("nothing inherited").containsEntry("reason", null);
    }

    @Test
    void each_unit_of_work_in_one_transaction_gets_its_own_context_and_the_push_rides_along() throws Exception {
        try (RoundTripCounter counter = new RoundTripCounter(db.port())) {
            AtomicReference<ChangeContext> current = new AtomicReference<>(ChangeContext.EMPTY);
            Jdbi plain = Jdbi.create(counter.dataSource(db.name()));
            Jdbi jdbi = Jdbi.create(counter.dataSource(db.name()))
                    .installPlugin(ChangeContextPlugin.create(current::get, "tidemark"));
            long id = jdbi.withHandle(h -> h.createUpdate("INSERT INTO notes (body) VALUES ('a')")
                    .executeAndReturnGeneratedKeys("id").mapTo(Long.class).one());

            int[] withContext = new int[1];
            jdbi.useTransaction(h -> {
                counter.reset();
                current.set(ChangeContext.changedBy("unit-1"));
                h.execute("UPDATE notes SET body = 'b' WHERE id = ?", id);
                current.set(ChangeContext.changedBy("unit-2"));
                h.execute("UPDATE notes SET body = 'c' WHERE id = ?", id);
                withContext[0] = counter.roundTrips();
            });
            int[] without = new int[1];
            plain.useTransaction(h -> {
                counter.reset();
                h.execute("UPDATE notes SET body = 'd' WHERE id = ?", id);
                h.execute("UPDATE notes SET body = 'e' WHERE id = ?", id);
                without[0] = counter.roundTrips();
            });
            assertThat(withContext[0]).as("two statements, two pushes, same round trips as without")
                    .isEqualTo(without[0]).isEqualTo(2);
            assertThat(history(id)).extracting(r -> r.get("changed_by"))
                    .containsExactly(null, "unit-1", "unit-2", null, null);
        }
    }
}
