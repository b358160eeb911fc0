package io.tidemark.history;

import io.tidemark.testing.EmbeddedPostgresTest;
import io.tidemark.testing.TestDatabase;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

import javax.sql.DataSource;
import java.time.Instant;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/**
 * {@link SecurityTest}'s roles on {@link HistoryStorage#CURRENT_IN_TABLE}: a reader granted the history view (and
 * the table, for {@code <table>_as_of}) reads every version without any grant on the closed-versions table.
 */
@EmbeddedPostgresTest
@ExtendWith(InvariantsAfterEach.class)
class CurrentSecurityTest {

    @Test
    void a_reader_granted_the_history_view_reads_history_and_as_of_without_a_grant_on_the_closed_versions(
            TestDatabase db) {
        DataSource admin = db.dataSource();
        DataSource owner = db.createRole("cur_owner");
        DataSource app = db.createRole("cur_app");
        DataSource reader = db.createRole("cur_reader");
        Db.exec(admin, "CREATE SCHEMA shop AUTHORIZATION cur_owner; GRANT CREATE ON DATABASE \"" + db.name()
                + "\" TO cur_owner");
        Db.exec(owner, "CREATE TABLE shop.orders (id int PRIMARY KEY, state text NOT NULL)");
        TemporalTable orders = TemporalTable.forTable("shop.orders").storage(HistoryStorage.CURRENT_IN_TABLE).build();
        orders.install(owner);
        // The documented grants of this shape: the view is the history; the table is read by <table>_as_of.
        Db.exec(owner, "GRANT USAGE ON SCHEMA shop TO cur_app, cur_reader;"
                + " GRANT SELECT, INSERT, UPDATE, DELETE ON shop.orders TO cur_app;"
                + " GRANT SELECT ON shop.orders, shop.orders_history TO cur_reader;"
                + " GRANT USAGE ON SCHEMA tidemark TO cur_reader;"
                + " GRANT SELECT ON tidemark.temporal_tables TO cur_reader");

        Db.exec(app, "INSERT INTO shop.orders VALUES (1, 'new'); UPDATE shop.orders SET state = 'paid' WHERE id = 1;"
                + " INSERT INTO shop.orders VALUES (2, 'new'); DELETE FROM shop.orders WHERE id = 2");
        assertThatThrownBy(() -> Db.exec(app, "SELECT * FROM shop.orders_history_closed"))
                .as("the application cannot read the closed versions").hasMessageContaining("permission denied");
        assertThatThrownBy(() -> Db.exec(app, "DELETE FROM shop.orders_history_closed"))
                .hasMessageContaining("permission denied");

        assertThatThrownBy(() -> Db.exec(reader, "SELECT * FROM shop.orders_history_closed"))
                .as("nor needs the reader to").hasMessageContaining("permission denied");
        assertThat(Db.count(reader, "SELECT count(*) FROM shop.orders_history")).as("two versions of each key, one a tombstone").isEqualTo(4);
        assertThat(orders.queries(reader).history(1)).extracting(r -> r.value("state"))
                .containsExactly("new", "paid");
        assertThat(orders.queries(reader).asOf(Instant.now())).extracting(r -> r.value("state"))
                .containsExactly("paid");
        assertThat(orders.queries(reader).asOf(Instant.now(), 1)).isPresent();
        assertThat(Db.rows(reader, "SELECT id, state FROM shop.orders_as_of(now())")).extracting(r -> r.get("state"))
                .containsExactly("paid");
        assertThat(Db.count(reader, "SELECT count(*) FROM shop.orders_as_of(now() - interval '1 hour')")).isZero();
        assertThat(orders.verify(owner).drifts()).isEmpty();

        // evolve rebuilds the view for a new column; the reader keeps its grant.
        Db.exec(owner, "ALTER TABLE shop.orders ADD COLUMN note text");
        orders.evolve(owner);
        assertThat(orders.verify(owner).drifts()).isEmpty();
        Db.exec(app, "UPDATE shop.orders SET note = 'gift' WHERE id = 1");
        assertThat(orders.queries(reader).history(1)).extracting(r -> r.value("note")).containsExactly(null, null, "gift");
        assertThat(Db.rows(reader, "SELECT note FROM shop.orders_as_of(now())")).extracting(r -> r.get("note"))
                .containsExactly("gift");
        assertThat(Db.scalar(admin, "SELECT relacl::text FROM pg_class WHERE oid = 'shop.orders_history'::regclass"))
                .asString().contains("cur_reader=r/cur_owner").doesNotContain("cur_app");
    }
}
