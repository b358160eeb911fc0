package io.tidemark.postgres.outbox;

import io.tidemark.postgres.CaptureShape;
import io.tidemark.testing.EmbeddedPostgresTest;
import io.tidemark.testing.TestDatabase;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

import java.sql.Connection;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.ArrayList;
import java.util.List;
import java.util.regex.Pattern;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The change function is PL/pgSQL, so its statements are planned once per session and the plans kept: after a few
 * calls PostgreSQL keeps a generic plan, made without knowing which versions a request asks for. The plans of the
 * page end's look-up and of the answer must still read the page through the outbox's primary key, not scan the
 * whole outbox.
 */
@EmbeddedPostgresTest
class ChangeFunctionPlanTest {

    private final TestDatabase database;

    ChangeFunctionPlanTest(TestDatabase database) {
        this.database = database;
    }

    @ParameterizedTest
    @EnumSource(CaptureShape.class)
    void the_generic_plan_of_the_answer_reads_a_page_through_the_outbox_primary_key(CaptureShape shape)
            throws SQLException {
        OutboxTables t = OutboxTables.create(shape, database, "plan", "id int PRIMARY KEY, name text");
        for (int from = 1; from <= 10_000; from += 500) {
            t.execute("INSERT INTO $T SELECT g, 'name ' || g FROM generate_series(" + from + ", " + (from + 499)
                    + ") AS g");
        }
        t.execute("ANALYZE " + t.outbox.outboxTable());
        String outboxName = t.outbox.outboxTable().substring(t.outbox.outboxTable().indexOf('.') + 1);

        String script = t.outbox.script(database.dataSource());

        assertReadsThroughThePrimaryKey(genericPlan(statement(script, "SELECT o.version INTO page_end", ";")),
                outboxName, "the page end's look-up");
        assertReadsThroughThePrimaryKey(genericPlan(statement(script, "SELECT json_build_object(\n"
                + "               'Metadata', json_build_object(\n                   'Sync'", "\n      INTO answer;")),
                outboxName, "the answer");
    }

    private static void assertReadsThroughThePrimaryKey(List<String> plan, String outboxName, String what) {
        Pattern pageScan = Pattern.compile("-> +Index (Only )?Scan using \"?" + outboxName + "_pkey\"? on \"?"
                + outboxName + "\"? o$");
        int scan = -1;
        for (int i = 0; i < plan.size(); i++) {
            if (pageScan.matcher(plan.get(i).trim()).matches()) {
                scan = i;
            }
        }
        assertThat(scan).as("the page's scan of %s in %s", what, plan).isNotNegative();
        assertThat(plan.get(scan + 1).trim()).startsWith("Index Cond: ((version > ");
        assertThat(plan).as(what).noneMatch(line -> line.contains("Seq Scan on " + outboxName));
    }

    /**
     * The statement of the change function's body that starts with {@code start} and ends before {@code end}, with
     * the function's variables as parameters: $1 fromVersion, $2 the page's end, $3 the horizon, $4 maxRows.
     */
    private static String statement(String script, String start, String end) {
        int body = script.indexOf("AS $changes$");
        int from = script.indexOf(start, body);
        assertThat(from).as("the change function holds %s", start).isGreaterThan(body);
        String statement = script.substring(from, script.indexOf(end, from)).replace(" INTO page_end", "");
        return statement.replaceAll("\\bfrom_version\\b", "\\$1").replaceAll("\\bpage_end\\b", "\\$2")
                .replaceAll("\\bhorizon\\b", "\\$3").replaceAll("\\bmax_rows\\b", "\\$4");
    }

    /** EXPLAIN of the statement's generic plan, for a page of 1,000 changes, line by line. */
    private List<String> genericPlan(String statement) throws SQLException {
        List<String> plan = new ArrayList<>();
        try (Connection c = database.dataSource().getConnection(); Statement s = c.createStatement()) {
            s.execute("SET plan_cache_mode = force_generic_plan");
            s.execute("PREPARE answer(bigint, bigint, bigint, integer) AS " + statement);
            try (ResultSet rs = s.executeQuery("EXPLAIN (COSTS OFF) EXECUTE answer(1, 1001, 1002, 1000)")) {
                while (rs.next()) {
                    plan.add(rs.getString(1));
                }
            }
            s.execute("DEALLOCATE answer");
        }
        return plan;
    }
}
