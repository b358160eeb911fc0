package io.tidemark.destinations.jdbc;

import io.tidemark.sync.ChangeBatch;
import io.tidemark.sync.spi.DeliveryException;
import io.tidemark.testing.EmbeddedPostgresServer;
import io.tidemark.testing.TestDatabase;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.Callable;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;

import static io.tidemark.destinations.jdbc.Changes.diff;
import static io.tidemark.destinations.jdbc.Changes.full;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/**
 * Exactly once by construction: the connection dies between the apply and the commit, then the page is offered
 * again; and two processes deliver the same pages at once. The target is a database of its own on the embedded
 * server, created for this class. An audit trigger counts every row write that committed.
 */
class JdbcTableCrashTest {

    private static TestDatabase target;
    private CrashingDataSource crashing;
    private JdbcTableDestination copy;

    @BeforeAll
    static void database() {
        target = EmbeddedPostgresServer.shared().createDatabase();
    }

    @AfterAll
    static void drop() {
        target.close();
    }

    @BeforeEach
    void tables() {
        target.execute("""
                DROP SCHEMA IF EXISTS copy CASCADE;
                CREATE SCHEMA copy;
                CREATE TABLE copy.items (id bigint PRIMARY KEY, name text NOT NULL);
                CREATE TABLE copy.audit (n bigserial PRIMARY KEY, op text NOT NULL, id bigint NOT NULL);
                CREATE FUNCTION copy.audit_row() RETURNS trigger LANGUAGE plpgsql AS $$
                BEGIN
                    INSERT INTO copy.audit (op, id) VALUES (TG_OP, CASE WHEN TG_OP = 'DELETE' THEN OLD.id ELSE NEW.id END);
                    RETURN NULL;
                END $$;
                CREATE TRIGGER audit AFTER INSERT OR UPDATE OR DELETE ON copy.items
                    FOR EACH ROW EXECUTE FUNCTION copy.audit_row();
                """);
        crashing = CrashingDataSource.postgres(target.dataSource());
        copy = JdbcTableDestination.postgres(crashing, "copy.items").name("items-copy")
                .columns("id", "name").keyColumns("id").build();
    }

    @Test
    void a_crash_between_the_apply_and_the_commit_loses_nothing_and_doubles_nothing() {
        copy.deliver(diff("Items", 0, 10, 1, 1, "{\"$operation\":\"I\",\"id\":1,\"name\":\"a\"}"));
        ChangeBatch page = diff("Items", 10, 20, 1, 1, "{\"$operation\":\"I\",\"id\":2,\"name\":\"b\"}",
                "{\"$operation\":\"U\",\"id\":1,\"name\":\"a2\"}", "{\"$operation\":\"I\",\"id\":3,\"name\":\"c\"}");

        crashing.crashNextCommit();
        assertThatThrownBy(() -> copy.deliver(page)).isInstanceOfSatisfying(DeliveryException.class,
                e -> assertThat(e.isRetryable()).as(e.getMessage()).isTrue());
        assertThat(crashing.crashes()).isEqualTo(1);
        assertThat(rows()).as("nothing of the page committed").containsExactly("1|a");
        assertThat(toVersion()).as("nor its position").isEqualTo(10);

        copy.deliver(page); // offered again: applied now
        copy.deliver(page); // and again (the engine crashed before it recorded the acceptance): skipped
        assertThat(rows()).containsExactly("1|a2", "2|b", "3|c");
        assertThat(toVersion()).isEqualTo(20);
        assertThat(audit()).as("each change written once").containsExactly("INSERT 1", "INSERT 2", "UPDATE 1",
                "INSERT 3");
    }

    @Test
    void a_crash_while_a_full_export_replaces_the_content_keeps_the_old_content_until_it_is_offered_again() {
        copy.deliver(diff("Items", 0, 10, 1, 1, "{\"$operation\":\"I\",\"id\":1,\"name\":\"old\"}"));
        copy.deliver(full("Items", 30, 1, 2, "{\"id\":5,\"name\":\"new5\"}"));
        ChangeBatch last = full("Items", 30, 2, 2, "{\"id\":6,\"name\":\"new6\"}");

        crashing.crashNextCommit();
        assertThatThrownBy(() -> copy.deliver(last)).isInstanceOf(DeliveryException.class);
        assertThat(rows()).as("the old content, whole").containsExactly("1|old");

        copy.deliver(last);
        copy.deliver(last);
        assertThat(rows()).containsExactly("5|new5", "6|new6");
        assertThat(audit()).containsExactly("INSERT 1", "DELETE 1", "INSERT 5", "INSERT 6");
    }

    @Test
    void two_processes_delivering_the_same_pages_at_once_apply_each_page_once() throws Exception {
        // Two destinations with the same name on separate data sources stand for two processes; the position row
        // lock serialises them and the second sees the first's page as applied.
        JdbcTableDestination other = JdbcTableDestination.postgres(target.dataSource(), "copy.items")
                .name("items-copy").columns("id", "name").keyColumns("id").build();
        List<ChangeBatch> pages = new ArrayList<>();
        for (int p = 0; p < 20; p++) {
            List<String> changes = new ArrayList<>();
            for (int i = 0; i < 50; i++) {
                int id = p * 50 + i;
                changes.add("{\"$operation\":\"I\",\"id\":" + id + ",\"name\":\"n" + id + "\"}");
            }
            pages.add(diff("Items", 0, 100, p + 1, 20, changes.toArray(String[]::new)));
        }
        CountDownLatch start = new CountDownLatch(1);
        ExecutorService pool = Executors.newFixedThreadPool(2);
        try {
            List<Future<Object>> done = new ArrayList<>();
            for (JdbcTableDestination d : List.of(copy, other)) {
                done.add(pool.submit((Callable<Object>) () -> {
                    start.await();
                    for (ChangeBatch page : pages) {
                        d.deliver(page);
                    }
                    return null;
                }));
            }
            start.countDown();
            for (Future<Object> f : done) {
                f.get();
            }
        } finally {
            pool.shutdownNow();
        }
        assertThat(audit()).hasSize(1000).allMatch(a -> a.startsWith("INSERT"));
        assertThat(toVersion()).isEqualTo(100);
    }

    private List<String> rows() {
        return query("SELECT id || '|' || name FROM copy.items ORDER BY id");
    }

    private List<String> audit() {
        return query("SELECT op || ' ' || id FROM copy.audit ORDER BY n");
    }

    private long toVersion() {
        return Long.parseLong(query("SELECT to_version FROM copy.tidemark_destination_position"
                + " WHERE destination_name = 'items-copy' AND object_name = 'Items'").get(0));
    }

    private List<String> query(String sql) {
        return Rows.query(target.dataSource(), sql);
    }
}
