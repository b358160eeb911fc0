package io.tidemark.history;

import io.tidemark.sync.ErrorCode;
import io.tidemark.sync.TidemarkException;
import io.tidemark.testing.EmbeddedPostgresTest;
import io.tidemark.testing.TestDatabase;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

import javax.sql.DataSource;
import java.io.IOException;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/** ChangeContext and the plain-JDBC integration: values, units of work, and no extra round trip. */
@EmbeddedPostgresTest
@ExtendWith(InvariantsAfterEach.class)
class ChangeContextTest {

    private static RoundTripCounter counter;
    private static DataSource relayed;

    private static final ChangeContext ALICE = ChangeContext.builder().changedBy("u-1").changedByName("Alice")
            .correlationId("req-9").reason("OPS-12 premium fix").extraJson("{\"ticket\": \"OPS-12\", \"n\": 1}").build();

    private final DataSource ds;

    ChangeContextTest(DataSource ds) {
        this.ds = ds;
    }

    @BeforeAll
    static void setUp(TestDatabase db) throws IOException {
        Db.exec(db.dataSource(), "CREATE TABLE ctx (id int PRIMARY KEY, v int NOT NULL)");
        TemporalTable.forTable("ctx").build().install(db.dataSource());
        counter = new RoundTripCounter(db.port());
        relayed = counter.dataSource(db.name());
    }

    @AfterAll
    static void tearDown() throws IOException {
        counter.close();
    }

    @BeforeEach
    void rows() {
        Db.exec(ds, "DELETE FROM ctx; TRUNCATE ctx_history; INSERT INTO ctx SELECT g, 0 FROM generate_series(1, 100) g;"
                + " TRUNCATE ctx_history");
        Db.exec(ds, "INSERT INTO ctx_history (id, v, valid_from, operation, chain_no) SELECT id, v, now(), 1, 1 FROM ctx");
    }

    private List<Map<String, Object>> lastVersions() {
        return Db.rows(ds, "SELECT id, v, changed_by, changed_by_name, correlation_id, reason, extra::text AS extra"
                + " FROM ctx_history WHERE valid_to = 'infinity' AND operation = 2 ORDER BY id");
    }

    // --- the value ------------------------------------------------------------------------------------------------

    @Test
    void extra_must_be_a_json_object_and_empty_values_are_absent() {
        assertThatThrownBy(() -> ChangeContext.builder().extraJson("{not json").build())
                .isInstanceOfSatisfying(TidemarkException.class,
                        e -> assertThat(e.code()).isEqualTo(ErrorCode.INVALID_CONFIGURATION))
                .hasMessageContaining("ChangeContext.extra is not valid JSON");
        assertThatThrownBy(() -> ChangeContext.builder().extraJson("[1, 2]").build())
                .hasMessageContaining("must be a JSON object, not array");
        assertThatThrownBy(() -> ChangeContext.builder().reason("a\0b").build())
                .hasMessageContaining("NUL character");
        ChangeContext empty = ChangeContext.builder().changedBy("").reason("").build();
        assertThat(empty.isEmpty()).isTrue();
        assertThat(empty).isEqualTo(ChangeContext.EMPTY);
        assertThat(ChangeContext.builder().extraJson("{ \"a\" : 1 }").build().extra()).contains("{\"a\":1}");
    }

    /** build() reports every bad value at once. */
    @Test
    void every_problem_is_reported_by_build() {
        assertThatThrownBy(() -> ChangeContext.builder().changedBy("a\0").changedByName("b\0").correlationId("c\0")
                .reason("d\0").extraJson("[1]").build())
                .isInstanceOfSatisfying(TidemarkException.class,
                        e -> assertThat(e.code()).isEqualTo(ErrorCode.INVALID_CONFIGURATION))
                .hasMessageStartingWith("ChangeContext has 5 configuration problems:")
                .hasMessageContaining("ChangeContext.changedBy contains a NUL character")
                .hasMessageContaining("ChangeContext.changedByName contains a NUL character")
                .hasMessageContaining("ChangeContext.correlationId contains a NUL character")
                .hasMessageContaining("ChangeContext.reason contains a NUL character")
                .hasMessageContaining("must be a JSON object, not array");
    }

    @Test
    void runWith_binds_a_context_to_the_thread_and_restores_the_previous_one() {
        assertThat(ChangeContext.current()).isEqualTo(ChangeContext.EMPTY);
        ChangeContext.runWith(ALICE, () -> {
            assertThat(ChangeContext.current()).isEqualTo(ALICE);
            ChangeContext.runWith(ChangeContext.changedBy("bob"),
                    () -> assertThat(ChangeContext.current().changedBy()).contains("bob"));
            assertThat(ChangeContext.current()).isEqualTo(ALICE);
        });
        assertThat(ChangeContext.current()).isEqualTo(ChangeContext.EMPTY);
    }

    // --- ContextualDataSource -------------------------------------------------------------------------------------

    @Test
    void in_auto_commit_the_context_travels_with_the_statement_and_does_not_outlive_it() throws SQLException {
        DataSource app = ContextualDataSource.wrap(ds);
        int updated = ChangeContext.callWith(ALICE, () -> update(app, "UPDATE ctx SET v = v + 1 WHERE id <= ?", 3));
        assertThat(updated).isEqualTo(3);
        assertThat(lastVersions()).hasSize(3).allSatisfy(row -> assertThat(row)
                .containsEntry("changed_by", "u-1").containsEntry("changed_by_name", "Alice")
                .containsEntry("correlation_id", "req-9").containsEntry("reason", "OPS-12 premium fix")
                .containsEntry("extra", "{\"n\": 1, \"ticket\": \"OPS-12\"}"));
        try (Connection c = app.getConnection(); Statement s = c.createStatement();
             ResultSet rs = s.executeQuery("SELECT coalesce(current_setting('tidemark.reason', true), '')")) {
            rs.next();
            assertThat(rs.getString(1)).as("the setting was transaction-local").isEmpty();
            assertThat(c.getAutoCommit()).isTrue();
        }
    }

    @Test
    void the_push_costs_no_extra_round_trip_where_a_separate_push_costs_two() throws SQLException {
        DataSource app = ContextualDataSource.wrap(relayed);
        int plain = roundTrips(relayed, c -> update(c, "UPDATE ctx SET v = v + 1 WHERE id <= 100"));
        int piggybacked = ChangeContext.callWith(ALICE,
                () -> roundTrips(app, c -> update(c, "UPDATE ctx SET v = v + 1 WHERE id <= 100")));
        int separate = roundTrips(relayed, c -> {
            c.setAutoCommit(false);
            ContextualDataSource.push(c, ALICE, "tidemark");   // the reference's way: its own statement
            update(c, "UPDATE ctx SET v = v + 1 WHERE id <= 100");
            c.commit();
        });
        assertThat(plain).isEqualTo(1);
        assertThat(piggybacked).as("context pushed with the statement").isEqualTo(plain);
        assertThat(separate).as("push, statement, commit").isEqualTo(3);
        assertThat(Db.count(ds, "SELECT count(*) FROM ctx_history WHERE reason = 'OPS-12 premium fix'"))
                .as("both pushes reached the trigger, 100 rows each").isEqualTo(200);
    }

    @Test
    void inside_a_transaction_each_unit_of_work_pushes_its_own_context_and_inherits_nothing() throws SQLException {
        DataSource app = ContextualDataSource.wrap(relayed);
        int[] trips = new int[3];
        try (Connection c = app.getConnection()) {
            c.setAutoCommit(false);
            counter.reset();
            ChangeContext.runWith(ALICE, () -> run(() -> update(c, "UPDATE ctx SET v = 1 WHERE id = 1")));
            trips[0] = counter.roundTrips();
            ChangeContext.runWith(ChangeContext.changedBy("bob"),
                    () -> run(() -> update(c, "UPDATE ctx SET v = 1 WHERE id = 2")));
            trips[1] = counter.roundTrips();
            ChangeContext.runWith(ChangeContext.changedBy("bob"),
                    () -> run(() -> update(c, "UPDATE ctx SET v = 1 WHERE id = 3")));
            trips[2] = counter.roundTrips();
            update(c, "UPDATE ctx SET v = 1 WHERE id = 4");   // no context any more: pushed as empty
            c.commit();
        }
        assertThat(trips).as("one round trip per statement, push included").containsExactly(1, 2, 3);
        List<Map<String, Object>> rows = lastVersions();
        assertThat(rows.get(0)).containsEntry("changed_by", "u-1").containsEntry("reason", "OPS-12 premium fix");
        assertThat(rows.get(1)).as("the reason of the first unit of work is not inherited")
                .containsEntry("changed_by", "bob").containsEntry("reason", null).containsEntry("extra", null);
        assertThat(rows.get(2)).containsEntry("changed_by", "bob");
        assertThat(rows.get(3)).containsEntry("changed_by", null).containsEntry("changed_by_name", null);
    }

    @Test
    void a_transaction_ended_by_sql_text_is_noticed_and_the_next_one_gets_the_context_again() throws SQLException {
        DataSource app = ContextualDataSource.wrap(ds);
        ChangeContext.runWith(ALICE, () -> run(() -> {
            try (Connection c = app.getConnection(); Statement s = c.createStatement()) {
                c.setAutoCommit(false);
                update(c, "UPDATE ctx SET v = 1 WHERE id = 1");
                s.execute("COMMIT");                              // not through Connection.commit()
                update(c, "UPDATE ctx SET v = 1 WHERE id = 2");   // a new transaction: the push must go again
                c.commit();
            }
        }));
        assertThat(lastVersions()).extracting(r -> r.get("changed_by")).containsExactly("u-1", "u-1");
    }

    @Test
    void without_context_nothing_is_pushed_and_no_transaction_is_opened() throws SQLException {
        DataSource app = ContextualDataSource.wrap(relayed);
        int trips = roundTrips(app, c -> {
            update(c, "UPDATE ctx SET v = 7 WHERE id = 1");
            assertThat(c.getAutoCommit()).isTrue();
        });
        assertThat(trips).isEqualTo(1);
        assertThat(lastVersions().get(0)).containsEntry("changed_by", null);
    }

    @Test
    void queries_plain_statements_batches_and_generated_keys_all_see_their_own_results() throws SQLException {
        DataSource app = ContextualDataSource.wrap(ds);
        ChangeContext tricky = ChangeContext.builder().changedBy("o'brien").reason("costs $ctx$ and $$ and \\ too")
                .build();
        ChangeContext.runWith(tricky, () -> run(() -> {
            try (Connection c = app.getConnection()) {
                try (PreparedStatement ps = c.prepareStatement("UPDATE ctx SET v = ? WHERE id = ? RETURNING id, v")) {
                    ps.setInt(1, 41);
                    ps.setInt(2, 1);
                    try (ResultSet rs = ps.executeQuery()) {
                        assertThat(rs.next()).isTrue();
                        assertThat(rs.getInt(2)).isEqualTo(41);
                    }
                    ps.setInt(1, 42);  // the same statement again, parameters rebound
                    try (ResultSet rs = ps.executeQuery()) {
                        assertThat(rs.next()).isTrue();
                        assertThat(rs.getInt(2)).isEqualTo(42);
                    }
                }
                try (Statement s = c.createStatement()) {
                    assertThat(s.executeUpdate("UPDATE ctx SET v = 5 WHERE id IN (2, 3)")).isEqualTo(2);
                    assertThat(s.execute("SELECT v FROM ctx WHERE id = 2")).isTrue();
                    try (ResultSet rs = s.getResultSet()) {
                        rs.next();
                        assertThat(rs.getInt(1)).isEqualTo(5);
                    }
                }
                try (PreparedStatement batch = c.prepareStatement("UPDATE ctx SET v = ? WHERE id = ?")) {
                    for (int id = 4; id <= 6; id++) {
                        batch.setInt(1, 100 + id);
                        batch.setInt(2, id);
                        batch.addBatch();
                    }
                    assertThat(batch.executeBatch()).containsExactly(1, 1, 1);
                }
                try (PreparedStatement keys = c.prepareStatement("INSERT INTO ctx VALUES (?, 0)",
                        Statement.RETURN_GENERATED_KEYS)) {
                    keys.setInt(1, 500);
                    assertThat(keys.executeUpdate()).isEqualTo(1);
                    try (ResultSet rs = keys.getGeneratedKeys()) {
                        rs.next();
                        assertThat(rs.getInt("id")).isEqualTo(500);
                    }
                }
            }
        }));
        assertThat(Db.count(ds, "SELECT count(*) FROM ctx_history WHERE changed_by = 'o''brien'"
                + " AND reason = 'costs $ctx$ and $$ and \\ too'")).as("every path recorded the context")
                .isEqualTo(2 + 2 + 3 + 1);
    }

    @Test
    void a_statement_switches_between_pushing_and_not_keeping_its_parameters() throws SQLException {
        DataSource app = ContextualDataSource.wrap(ds);
        List<Integer> counts = new ArrayList<>();
        try (Connection c = app.getConnection(); PreparedStatement ps = c.prepareStatement(
                "UPDATE ctx SET v = v + ? WHERE id = ?")) {
            ps.setInt(1, 1);
            ps.setInt(2, 10);
            counts.add(ChangeContext.callWith(ALICE, () -> sql(() -> ps.executeUpdate())));
            counts.add(ps.executeUpdate());
            counts.add(ChangeContext.callWith(ChangeContext.changedBy("carol"), () -> sql(() -> ps.executeUpdate())));
        }
        assertThat(counts).containsExactly(1, 1, 1);
        assertThat(Versions.of(ds, "ctx_history", "id = 10").rows().stream().map(r -> r.get("changed_by")).toList())
                .containsExactly(null, "u-1", null, "carol");
    }

    @Test
    void pushing_by_hand_needs_a_transaction() throws SQLException {
        try (Connection c = ds.getConnection()) {
            assertThatThrownBy(() -> ContextualDataSource.push(c, ALICE, "tidemark"))
                    .hasMessageContaining("auto-commit");
        }
        assertThatThrownBy(() -> ContextualDataSource.wrap(ds, ChangeContext::current, "Bad-Prefix"))
                .hasMessageContaining("settings prefix 'Bad-Prefix'");
    }

    // --- helpers --------------------------------------------------------------------------------------------------

    interface SqlCall<T> {
        T call() throws SQLException;
    }

    interface SqlRun {
        void run() throws SQLException;
    }

    interface ConnectionWork {
        void run(Connection c) throws SQLException;
    }

    static <T> T sql(SqlCall<T> call) {
        try {
            return call.call();
        } catch (SQLException e) {
            throw new IllegalStateException(e);
        }
    }

    static void run(SqlRun run) {
        try {
            run.run();
        } catch (SQLException e) {
            throw new IllegalStateException(e);
        }
    }

    /** Round trips of {@code work} on a fresh connection, not counting the connection's own setup. */
    static int roundTrips(DataSource source, ConnectionWork work) {
        try (Connection c = source.getConnection()) {
            counter.reset();
            work.run(c);
            return counter.roundTrips();
        } catch (SQLException e) {
            throw new IllegalStateException(e);
        }
    }

    static int update(DataSource source, String sql, Object... params) {
        try (Connection c = source.getConnection()) {
            return update(c, sql, params);
        } catch (SQLException e) {
            throw new IllegalStateException(e);
        }
    }

    static int update(Connection c, String sql, Object... params) throws SQLException {
        try (PreparedStatement ps = c.prepareStatement(sql)) {
            for (int i = 0; i < params.length; i++) {
                ps.setObject(i + 1, params[i]);
            }
            return ps.executeUpdate();
        }
    }
}
