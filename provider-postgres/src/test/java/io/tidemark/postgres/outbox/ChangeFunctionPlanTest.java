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
 * The change function is PL/pgSQL, so its one statement is planned once per session and the plan kept: after a few
 * calls PostgreSQL keeps a generic plan, made without knowing which versions a request asks for. That plan must
 * still read a page through the outbox's primary key, not scan the whole outbox.
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

        List<String> plan = genericPlan(answerStatement(t.outbox.script(database.dataSource())));

        Pattern pageScan = Pattern.compile("-> +Index (Only )?Scan using \"?" + outboxName + "_pkey\"? on \"?"
                + outboxName + "\"? o$");
        int scan = -1;
        for (int i = 0; i < plan.size(); i++) {
            if (pageScan.matcher(plan.get(i).trim()).matches()) {
                scan = i;
            }
        }
        assertThat(scan).as("the page's scan in %s", plan).isNotNegative();
        assertThat(plan.get(scan + 1).trim()).startsWith("Index Cond: ((version > ");
        assertThat(plan).noneMatch(line -> line.contains("Seq Scan on " + outboxName));
    }

    /** The statement of the change function's body, with the request as parameter $1 in place of payload. */
    private static String answerStatement(String script) {
        int body = script.indexOf("BEGIN\n", script.indexOf("AS $changes$")) + "BEGIN\n".length();
        String statement = script.substring(body, script.indexOf("\n  INTO answer;", body));
        assertThat(statement.split("\\(payload\\)", -1)).as("payload is read once, by the request function")
                .hasSize(2);
        return statement.replace("(payload)", "($1)");
    }

    /** EXPLAIN of the statement's generic plan, for a request of a page of 1,000 changes, line by line. */
    private List<String> genericPlan(String statement) throws SQLException {
        List<String> plan = new ArrayList<>();
        try (Connection c = database.dataSource().getConnection(); Statement s = c.createStatement()) {
            s.execute("SET plan_cache_mode = force_generic_plan");
            s.execute("PREPARE answer(json) AS " + statement);
            try (ResultSet rs = s.executeQuery("EXPLAIN (COSTS OFF) EXECUTE answer('{\"fromVersion\": 1,"
                    + " \"maxRows\": 1000}')")) {
                while (rs.next()) {
                    plan.add(rs.getString(1));
                }
            }
            s.execute("DEALLOCATE answer");
        }
        return plan;
    }
}
