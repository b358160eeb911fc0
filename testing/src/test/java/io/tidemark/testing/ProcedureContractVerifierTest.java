package io.tidemark.testing;

import io.tidemark.sync.ErrorCode;
import io.tidemark.sync.TidemarkException;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;

import java.io.IOException;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import java.util.Map;
import java.util.function.UnaryOperator;
import java.util.stream.Collectors;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/**
 * The verifier's verdicts on the identity-as-version function of docs/contract.md (installed verbatim) and on variants
 * with one mistake each: every scenario must be able to fail, and fail for the right reason.
 */
@EmbeddedPostgresTest
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
class ProcedureContractVerifierTest {

    private static final String REFERENCE = "get_item_changes";

    /** The reference's change function with xid8 versions: closes the gap, but orders by transaction id. */
    private static final String XID_VERSIONS = """
            CREATE FUNCTION xid_versions(payload json) RETURNS json LANGUAGE plpgsql AS $$
            DECLARE
                from_version bigint  := COALESCE((payload ->> 'fromVersion')::bigint, 0);
                max_rows     integer := (payload ->> 'maxRows')::integer;
                horizon      bigint  := pg_snapshot_xmin(pg_current_snapshot())::text::bigint;
                rows_json    json;
                top          bigint;
            BEGIN
                IF payload ->> 'mode' = 'seed' THEN
                    RETURN json_build_object('Metadata', json_build_object('Sync', json_build_object('Version', horizon - 1)));
                END IF;
                SELECT json_agg(json_build_object('$operation', r.operation, '$version', r.v, 'ItemCode', r.item_code,
                                                  'Description', r.description) ORDER BY r.v, r.id), max(r.v)
                  INTO rows_json, top
                  FROM (SELECT o.*, o.xact_id::text::bigint AS v FROM items_outbox o
                         WHERE o.xact_id::text::bigint > from_version AND o.xact_id::text::bigint < horizon
                         ORDER BY o.xact_id, o.id LIMIT {{limit}}) r;
                RETURN json_build_object('Metadata', json_build_object('Sync', json_build_object(
                           'Version', COALESCE(top, horizon - 1))), 'Data', COALESCE(rows_json, '[]'::json));
            END $$;""";

    /**
     * One net change per key and read, from the row as it is (as an outbox of keys or SQL Server Change Tracking
     * answers), with xid8 versions below the horizon. {@code {{absent}}} decides which keys without a row are
     * reported: all of them, or (the mistake) only those whose first change in the read is not an insert.
     */
    private static final String NET_CHANGES = """
            CREATE FUNCTION {{name}}(payload json) RETURNS json LANGUAGE plpgsql AS $$
            DECLARE
                from_version bigint := COALESCE((payload ->> 'fromVersion')::bigint, 0);
                horizon      bigint := pg_snapshot_xmin(pg_current_snapshot())::text::bigint;
                rows_json    json;
            BEGIN
                IF payload ->> 'mode' = 'seed' THEN
                    RETURN json_build_object('Metadata', json_build_object('Sync', json_build_object('Version', horizon - 1)));
                END IF;
                SELECT json_agg(CASE WHEN i.item_code IS NULL
                                     THEN json_build_object('$operation', 'D', '$version', p.v, 'ItemCode', p.item_code)
                                     ELSE json_build_object('$operation', CASE WHEN p.first_op = 'I' THEN 'I' ELSE 'U' END,
                                                            '$version', p.v, 'ItemCode', i.item_code,
                                                            'Description', i.description) END
                                ORDER BY p.v, p.id)
                  INTO rows_json
                  FROM (SELECT o.item_code, min(o.xact_id::text::bigint) AS v, min(o.id) AS id,
                               (array_agg(o.operation ORDER BY o.xact_id, o.id))[1] AS first_op
                          FROM items_outbox o
                         WHERE o.xact_id::text::bigint > from_version AND o.xact_id::text::bigint < horizon
                         GROUP BY o.item_code) p
                  LEFT JOIN items i ON i.item_code = p.item_code
                 WHERE {{absent}};
                RETURN json_build_object('Metadata', json_build_object('Sync', json_build_object('Version', horizon - 1)),
                                         'Data', COALESCE(rows_json, '[]'::json));
            END $$;""";

    private final TestDatabase database;
    private String referenceSql;

    ProcedureContractVerifierTest(TestDatabase database) {
        this.database = database;
    }

    @BeforeAll
    void installTheReference() throws IOException {
        try (InputStream in = getClass().getResourceAsStream("/io/tidemark/testing/reference/procedure-contract-postgres.sql")) {
            referenceSql = new String(in.readAllBytes(), StandardCharsets.UTF_8);
        }
        database.execute("CREATE TABLE items (item_code text PRIMARY KEY, description text, price numeric NOT NULL)");
        database.execute(referenceSql);
    }

    /** The reference change function under another name, with one edit. */
    private String variant(String name, UnaryOperator<String> edit) {
        String function = referenceSql.substring(referenceSql.indexOf("CREATE OR REPLACE FUNCTION get_item_changes"))
                .replace("get_item_changes", name);
        String edited = edit.apply(function);
        assertThat(edited).as("the edit of %s applies", name).isNotEqualTo(function);
        database.execute(edited);
        return name;
    }

    private ProcedureContractVerifier.Builder verifier(String function) {
        return ProcedureContractVerifier.forFunction(database.dataSource(), function)
                .keyField("ItemCode")
                .insert("INSERT INTO items (item_code, description, price) VALUES (?, 'created', 1)")
                .update("UPDATE items SET price = price + 1 WHERE item_code = ?")
                .clear("UPDATE items SET description = NULL WHERE item_code = ?", "Description")
                .delete("DELETE FROM items WHERE item_code = ?");
    }

    private static Map<String, ContractReport.Verdict> verdicts(ContractReport report) {
        return report.scenarios().stream().collect(Collectors.toMap(ContractReport.Scenario::id,
                ContractReport.Scenario::verdict, (a, b) -> a, java.util.LinkedHashMap::new));
    }

    private static Map<String, ContractReport.Verdict> allSafeBut(String... unsafe) {
        Map<String, ContractReport.Verdict> expected = new java.util.LinkedHashMap<>();
        for (String id : new String[] {"metadata-version", "basic-order", "delete", "null-clear", "seed", "monotonic",
                "in-flight-interleaving", "same-row-order", "early-read-delete", "max-rows"}) {
            expected.put(id, ContractReport.Verdict.SAFE);
        }
        for (String id : unsafe) {
            expected.put(id, ContractReport.Verdict.UNSAFE);
        }
        return expected;
    }

    @Test
    void the_reference_function_is_unsafe_on_the_in_flight_interleaving_and_safe_otherwise() {
        ContractReport report = verifier(REFERENCE).verify();

        assertThat(verdicts(report)).as(report.toString()).isEqualTo(allSafeBut("in-flight-interleaving"));
        assertThat(report.isSafe()).isFalse();
        ContractReport.Scenario gap = report.scenario("in-flight-interleaving");
        assertThat(gap.findings()).singleElement().asString()
                .contains("captured first but committed last").contains("was never reported");
        assertThat(gap.transcript()).anySatisfy(line -> assertThat(line).startsWith("U: takes transaction id"))
                .anySatisfy(line -> assertThat(line).startsWith("T: insert"))
                .anySatisfy(line -> assertThat(line).startsWith("T: commits"));
        assertThatThrownBy(report::assertSafe).isInstanceOf(AssertionError.class)
                .hasMessageContaining("Procedure contract of get_item_changes: NOT SAFE (1 of 10 scenarios failed)")
                .hasMessageContaining("UNSAFE  in-flight-interleaving");
    }

    @Test
    void versions_from_transaction_ids_close_the_gap_but_reorder_changes_of_one_row() {
        database.execute(XID_VERSIONS.replace("{{limit}}", "NULL"));

        ContractReport report = verifier("xid_versions").verify();

        assertThat(verdicts(report)).as(report.toString()).isEqualTo(allSafeBut("same-row-order"));
        assertThat(report.scenario("same-row-order").findings()).singleElement().asString()
                .contains("comes after the insert that followed it");
    }

    @Test
    void a_page_cut_inside_a_transaction_loses_the_rest_of_it() {
        database.execute(XID_VERSIONS.replace("xid_versions", "xid_versions_cut").replace("{{limit}}", "max_rows"));

        ContractReport report = verifier("xid_versions_cut").verify();

        assertThat(report.scenario("max-rows").verdict()).as(report.toString()).isEqualTo(ContractReport.Verdict.UNSAFE);
        assertThat(report.scenario("max-rows").findings()).singleElement().asString().contains("were never reported");
    }

    @Test
    void a_function_of_net_changes_is_safe_on_every_scenario() {
        database.execute(NET_CHANGES.replace("{{name}}", "net_changes").replace("{{absent}}", "true"));

        ContractReport report = verifier("net_changes").netChanges().verify();

        assertThat(verdicts(report)).as(report.toString()).isEqualTo(allSafeBut());
    }

    /**
     * The mistake the outbox of keys once made: an insert and a delete of a key in one read are left out as nothing to
     * tell, but an earlier read may have delivered the inserted row early, and its reader keeps it for ever.
     */
    @Test
    void net_changes_that_leave_out_an_insert_and_a_delete_in_one_read_are_caught() {
        database.execute(NET_CHANGES.replace("{{name}}", "net_changes_skip").replace("{{absent}}",
                "i.item_code IS NOT NULL OR p.first_op <> 'I'"));

        ContractReport report = verifier("net_changes_skip").netChanges().verify();

        assertThat(verdicts(report)).as(report.toString()).isEqualTo(allSafeBut("early-read-delete"));
        assertThat(report.scenario("early-read-delete").findings()).singleElement().asString()
                .contains("a consumer ends holding a row the table does not");
        assertThat(report.scenario("early-read-delete").transcript())
                .anySatisfy(line -> assertThat(line).startsWith("older: takes transaction id"));
    }

    @Test
    void rows_in_the_wrong_order_are_caught() {
        String fn = variant("bad_order", f -> f.replace("ORDER BY o.id)", "ORDER BY o.id DESC)"));

        assertThat(verifier(fn).verify().scenario("basic-order").verdict()).isEqualTo(ContractReport.Verdict.UNSAFE);
    }

    @Test
    void a_function_that_drops_deletes_is_caught() {
        String fn = variant("drops_deletes", f -> f.replace("AND o.xact_id < horizon;", "AND o.xact_id < horizon AND o.operation <> 'D';"));

        ContractReport report = verifier(fn).verify();

        assertThat(report.scenario("delete").verdict()).isEqualTo(ContractReport.Verdict.UNSAFE);
        assertThat(report.scenario("delete").findings()).singleElement().asString().contains("was never reported");
    }

    @Test
    void stripping_nulls_without_changed_columns_is_caught() {
        String fn = variant("strips_nulls", f -> f.replace("json_agg(json_build_object(", "json_agg(json_strip_nulls(json_build_object(")
                .replace(") ORDER BY o.id)", ")) ORDER BY o.id)"));

        ContractReport report = verifier(fn).verify();

        assertThat(report.scenario("null-clear").verdict()).isEqualTo(ContractReport.Verdict.UNSAFE);
        assertThat(report.scenario("null-clear").findings()).singleElement().asString().contains("reads as ABSENT");
    }

    @Test
    void a_function_that_ignores_seed_mode_is_caught() {
        String fn = variant("ignores_seed", f -> f.replace("IF seeding THEN", "IF false THEN"));

        ContractReport report = verifier(fn).verify();

        assertThat(report.scenario("seed").verdict()).isEqualTo(ContractReport.Verdict.UNSAFE);
        assertThat(report.scenario("seed").findings()).singleElement().asString().contains("the seed returned");
    }

    @Test
    void a_version_that_goes_back_when_nothing_changed_is_caught() {
        String fn = variant("goes_back", f -> f.replace("SELECT COALESCE(MAX(id), from_version)", "SELECT COALESCE(MAX(id), 0)")
                .replace("     WHERE xact_id < horizon;", "     WHERE xact_id < horizon AND id > from_version;"));

        ContractReport report = verifier(fn).verify();

        assertThat(report.scenario("monotonic").verdict()).isEqualTo(ContractReport.Verdict.UNSAFE);
        assertThat(report.scenario("monotonic").findings()).singleElement().asString().contains("went down");
    }

    @Test
    void a_missing_metadata_version_is_caught() {
        String fn = variant("no_version", f -> f.replace(
                "'Version', max_version, 'Type', 'Diff', 'ReasonCode', 0)),\n        'Data', rows_json);",
                "'Type', 'Diff', 'ReasonCode', 0)),\n        'Data', rows_json);"));

        ContractReport report = verifier(fn).verify();

        assertThat(report.scenario("metadata-version").verdict()).isEqualTo(ContractReport.Verdict.UNSAFE);
        assertThat(report.scenario("metadata-version").findings()).singleElement().asString()
                .contains("Metadata.Sync.Version is missing");
    }

    @Test
    void a_failing_row_action_is_an_error_not_a_verdict_on_the_function() {
        ContractReport report = verifier(REFERENCE).insert("INSERT INTO items (item_code, nope) VALUES (?, 1)").verify();

        assertThat(report.scenario("basic-order").verdict()).isEqualTo(ContractReport.Verdict.ERROR);
        assertThat(report.scenario("basic-order").findings()).singleElement().asString()
                .contains("the insert action failed").contains("nope");
    }

    @Test
    void the_verifier_needs_every_action_and_the_key_field() {
        assertThatThrownBy(() -> ProcedureContractVerifier.forFunction(database.dataSource(), REFERENCE).build())
                .isInstanceOf(TidemarkException.class).hasMessageContaining("keyField")
                .extracting(e -> ((TidemarkException) e).code()).isEqualTo(ErrorCode.INVALID_CONFIGURATION);
        assertThatThrownBy(() -> verifier(REFERENCE).clear("UPDATE items SET description = NULL WHERE item_code = ?", " ")
                .build()).hasMessageContaining("cleared column");
        assertThatThrownBy(() -> ProcedureContractVerifier.forFunction(database.dataSource(), "bad name;").build())
                .extracting(e -> ((TidemarkException) e).code()).isEqualTo(ErrorCode.INVALID_CONFIGURATION);
    }

    /** Setters only store: build() reports every missing or bad value at once, nulls included. */
    @Test
    void every_problem_is_reported_by_build() {
        ProcedureContractVerifier.Builder builder = ProcedureContractVerifier.forFunction(null, "bad name;")
                .insert((String) null).update((String) null).delete((String) null).clear((String) null, null)
                .timeout(null);
        assertThatThrownBy(builder::build)
                .satisfies(e -> assertThat(((TidemarkException) e).code()).isEqualTo(ErrorCode.INVALID_CONFIGURATION))
                .hasMessageStartingWith("ProcedureContractVerifier has 9 configuration problems:")
                .hasMessageContaining("dataSource must not be null")
                .hasMessageContaining("Refusing the function name")
                .hasMessageContaining("needs keyField(...)")
                .hasMessageContaining("needs insert(...)")
                .hasMessageContaining("needs update(...)")
                .hasMessageContaining("needs clear(..., field)")
                .hasMessageContaining("needs clear(..., field): the JSON key of the cleared column")
                .hasMessageContaining("needs delete(...)")
                .hasMessageContaining("timeout must be at least one second");
    }

    @Test
    void a_verifier_of_a_provider_needs_the_provider_and_its_object() {
        assertThatThrownBy(() -> ProcedureContractVerifier.forProvider(database.dataSource(), null, null)
                .beforeEachRead(null).keyField("ItemCode").insert("INSERT INTO items VALUES (?)")
                .update("UPDATE items SET price = 1 WHERE item_code = ?")
                .clear("UPDATE items SET description = NULL WHERE item_code = ?", "Description")
                .delete("DELETE FROM items WHERE item_code = ?").build())
                .satisfies(e -> assertThat(((TidemarkException) e).code()).isEqualTo(ErrorCode.INVALID_CONFIGURATION))
                .hasMessageContaining("provider must not be null")
                .hasMessageContaining("object must not be null")
                .hasMessageContaining("beforeEachRead must not be null")
                .hasMessageNotContaining("function");
    }

    @Test
    void the_verifier_leaves_no_rows_behind() {
        verifier(REFERENCE).verify();

        assertThat(count("SELECT count(*) FROM items")).isZero();
    }

    private long count(String sql) {
        try (var c = database.dataSource().getConnection(); var s = c.createStatement(); var rs = s.executeQuery(sql)) {
            rs.next();
            return rs.getLong(1);
        } catch (java.sql.SQLException e) {
            throw new IllegalStateException(e);
        }
    }
}
