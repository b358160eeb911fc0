package io.tidemark.history.internal.ddl;

import io.tidemark.sync.testsupport.Golden;
import io.tidemark.history.internal.catalog.Column;
import io.tidemark.history.internal.catalog.TableShape;
import io.tidemark.history.Db;
import io.tidemark.history.HistoryStorage;
import io.tidemark.history.InvariantsAfterEach;
import io.tidemark.history.TemporalTable;
import io.tidemark.history.TriggerMode;
import io.tidemark.history.TruncatePolicy;
import io.tidemark.sync.internal.sql.PgName;
import io.tidemark.testing.EmbeddedPostgresTest;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

import javax.sql.DataSource;
import java.sql.Connection;
import java.sql.Statement;
import java.util.List;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The generated SQL, byte for byte against reviewed golden files, and the same SQL executed on the real server.
 * The shapes built by hand here must match what the catalog reader reads from the live tables, so the golden
 * files pin both the generator and the catalog reading.
 */
@EmbeddedPostgresTest
@ExtendWith(InvariantsAfterEach.class)
class HistorySqlGoldenTest {

    static final String POLICIES_DDL = ""
            + "CREATE TYPE public.policy_status AS ENUM ('draft', 'active', 'lapsed');\n"
            + "CREATE DOMAIN public.money_amount AS numeric(12,2) CHECK (VALUE >= 0);\n"
            + "CREATE TABLE public.policies (\n"
            + "    id        bigint PRIMARY KEY,\n"
            + "    number    varchar(20) NOT NULL UNIQUE,\n"
            + "    premium   public.money_amount,\n"
            + "    status    public.policy_status NOT NULL DEFAULT 'draft',\n"
            + "    holder    text COLLATE \"C\",\n"
            + "    tags      text[],\n"
            + "    terms     json,\n"
            + "    location  point,\n"
            + "    document  bytea\n"
            + ");\n"
            + "CREATE TABLE public.policies_stmt (LIKE public.policies INCLUDING ALL);\n"
            + "CREATE TABLE public.policies_cur (LIKE public.policies INCLUDING ALL);\n"
            + "CREATE SCHEMA \"Sales\";\n"
            + "CREATE TABLE \"Sales\".\"Order Lines\" (\n"
            + "    \"Order\"  integer,\n"
            + "    line     smallint,\n"
            + "    amount   numeric(10,2)[],\n"
            + "    noted_at timestamp(3) with time zone,\n"
            + "    PRIMARY KEY (\"Order\", line)\n"
            + ");";

    static final TemporalTable POLICIES = TemporalTable.forTable("public.policies").exclude("document").build();
    /** Statement triggers and the optional period index, on the same table (installed on a copy of it). */
    static final TemporalTable POLICIES_STATEMENT = TemporalTable.forTable("public.policies_stmt").exclude("document")
            .triggerMode(TriggerMode.STATEMENT).periodIndex(true).build();
    /** The current version kept in the table, on another copy. */
    static final TemporalTable POLICIES_CURRENT = TemporalTable.forTable("public.policies_cur").exclude("document")
            .storage(HistoryStorage.CURRENT_IN_TABLE).build();
    /** The same, with DELETE archived once per statement. */
    static final TemporalTable POLICIES_CURRENT_STATEMENT = TemporalTable.forTable("public.policies_cur")
            .exclude("document").storage(HistoryStorage.CURRENT_IN_TABLE).triggerMode(TriggerMode.STATEMENT).build();
    static final TemporalTable ORDER_LINES = TemporalTable.forTable("\"Sales\".\"Order Lines\"")
            .truncatePolicy(TruncatePolicy.REFUSE).periodIndex(false).sessionUserColumn(true)
            .transactionIdColumn(true).settingsPrefix("sales_audit").seedValidFrom("noted_at").build();

    @BeforeAll
    static void createTables(DataSource ds) {
        Db.exec(ds, POLICIES_DDL);
    }

    static TableShape policiesShape() {
        Column id = new Column("id", "bigint", null, false);
        List<Column> all = List.of(id,
                new Column("number", "character varying(20)", null, false),
                new Column("premium", "public.money_amount", null, false),
                new Column("status", "public.policy_status", null, false),
                new Column("holder", "text", "pg_catalog.\"C\"", false),
                new Column("tags", "text[]", null, false),
                new Column("terms", "json", null, true),
                new Column("location", "point", null, true),
                new Column("document", "bytea", null, false));
        return new TableShape(PgName.of("public", "policies"), all, all.subList(0, 8), List.of(id));
    }

    static TableShape policiesStatementShape() {
        TableShape p = policiesShape();
        return new TableShape(PgName.of("public", "policies_stmt"), p.allColumns(), p.versioned(), p.keyColumns());
    }

    static TableShape policiesCurrentShape() {
        TableShape p = policiesShape();
        return new TableShape(PgName.of("public", "policies_cur"), p.allColumns(), p.versioned(), p.keyColumns());
    }

    static TableShape orderLinesShape() {
        Column order = new Column("Order", "integer", null, false);
        Column line = new Column("line", "smallint", null, false);
        List<Column> all = List.of(order, line, new Column("amount", "numeric(10,2)[]", null, false),
                new Column("noted_at", "timestamp(3) with time zone", null, false));
        return new TableShape(PgName.of("Sales", "Order Lines"), all, all, List.of(order, line));
    }

    @Test
    void policies_script_matches_the_golden_file() {
        Golden.assertMatches("policies.sql", new Installer(POLICIES).render(policiesShape()));
    }

    @Test
    void statement_triggers_match_the_golden_file() {
        Golden.assertMatches("policies_statement.sql",
                new Installer(POLICIES_STATEMENT).render(policiesStatementShape()));
    }

    @Test
    void the_current_in_table_storage_matches_the_golden_file() {
        Golden.assertMatches("policies_current.sql", new Installer(POLICIES_CURRENT).render(policiesCurrentShape()));
    }

    @Test
    void the_current_in_table_storage_with_statement_deletes_matches_the_golden_file() {
        Golden.assertMatches("policies_current_statement.sql",
                new Installer(POLICIES_CURRENT_STATEMENT).render(policiesCurrentShape()));
    }

    @Test
    void quoted_names_composite_key_and_every_option_match_the_golden_file() {
        Golden.assertMatches("order_lines.sql", new Installer(ORDER_LINES).render(orderLinesShape()));
    }

    @Test
    void the_catalog_reader_reads_exactly_the_shapes_of_the_golden_files(DataSource ds) {
        Golden.assertMatches("policies.sql", POLICIES.script(ds));
        Golden.assertMatches("order_lines.sql", ORDER_LINES.script(ds));
        Golden.assertMatches("policies_statement.sql", POLICIES_STATEMENT.script(ds));
        Golden.assertMatches("policies_current.sql", POLICIES_CURRENT.script(ds));
    }

    @Test
    void the_golden_scripts_run_on_the_real_server_and_install_a_clean_history(DataSource ds) throws Exception {
        Db.exec(ds, "INSERT INTO public.policies (id, number, premium, status, terms) VALUES"
                + " (1, 'P-1', 100, 'active', '{\"a\": 1}'), (2, 'P-2', 200, 'draft', NULL)");
        Db.exec(ds, "INSERT INTO public.policies_stmt SELECT * FROM public.policies");
        Db.exec(ds, "INSERT INTO public.policies_cur SELECT * FROM public.policies");
        Db.exec(ds, "INSERT INTO \"Sales\".\"Order Lines\" VALUES (7, 1, '{1.50,2.25}', '2020-01-02 03:04:05+00')");
        for (String file : List.of("policies.sql", "order_lines.sql", "policies_statement.sql",
                "policies_current.sql")) {
            try (Connection c = ds.getConnection(); Statement s = c.createStatement()) {
                c.setAutoCommit(false);
                s.execute(Golden.read(file));
                c.commit();
            }
        }
        assertThat(POLICIES.verify(ds).drifts()).isEmpty();
        assertThat(ORDER_LINES.verify(ds).drifts()).isEmpty();
        assertThat(POLICIES_STATEMENT.verify(ds).drifts()).isEmpty();
        assertThat(POLICIES_CURRENT.verify(ds).drifts()).isEmpty();
        assertThat(Db.count(ds, "SELECT count(*) FROM public.policies_history WHERE operation = 1"
                + " AND valid_to = 'infinity'")).isEqualTo(2);
        assertThat(Db.scalar(ds, "SELECT valid_from = '2020-01-02 03:04:05+00' FROM \"Sales\".\"Order Lines_history\""))
                .as("seeded from the configured column").isEqualTo(true);
        Db.exec(ds, "UPDATE public.policies SET terms = '{\"a\": 2}', location = point(1, 2) WHERE id = 1");
        assertThat(Db.count(ds, "SELECT count(*) FROM public.policies_history WHERE id = 1")).isEqualTo(2);
        Db.exec(ds, "UPDATE public.policies_stmt SET terms = '{\"a\": 2}', location = point(1, 2) WHERE id = 1");
        assertThat(Db.count(ds, "SELECT count(*) FROM public.policies_stmt_history WHERE id = 1")).isEqualTo(2);
        Db.exec(ds, "UPDATE public.policies_cur SET terms = '{\"a\": 2}', location = point(1, 2) WHERE id = 1");
        assertThat(Db.count(ds, "SELECT count(*) FROM public.policies_cur_history WHERE id = 1")).isEqualTo(2);
        assertThat(Db.count(ds, "SELECT count(*) FROM public.policies_cur_as_of(now())")).isEqualTo(2);
    }
}
