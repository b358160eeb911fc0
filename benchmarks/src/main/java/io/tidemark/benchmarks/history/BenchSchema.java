package io.tidemark.benchmarks.history;

import io.tidemark.history.Db;
import io.tidemark.history.ReferenceShape;
import io.tidemark.history.TemporalTable;
import io.tidemark.history.TriggerMode;

import javax.sql.DataSource;
import java.sql.SQLException;
import java.util.List;

/**
 * Identical tables: {@code bench_plain} (no history), {@code bench_tm} (Tidemark's row trigger, the default
 * configuration), {@code bench_tms} (Tidemark's statement triggers), {@code bench_ref} (the reference trigger of
 * history-trigger/src/test/resources/reference/policies-reference-shape.sql, given a (key, valid_from DESC) index so
 * its lookups are not scans) and the two {@link DesignBounds} tables. Every history is preloaded with the same
 * synthetic chains: {@code keys} rows with {@code versions} versions each, the last one open, spread over the past
 * days.
 */
final class BenchSchema {

    static final String COLUMNS = "id bigint PRIMARY KEY, account int NOT NULL, amount numeric(12,2) NOT NULL,"
            + " status text NOT NULL, note text, updated_at timestamptz NOT NULL";
    static final List<String> NAMES = List.of("id", "account", "amount", "status", "note", "updated_at");
    static final List<String> TYPES = List.of("bigint", "int", "numeric(12,2)", "text", "text", "timestamptz");
    static final TemporalTable TIDEMARK = TemporalTable.forTable("bench_tm").build();
    static final TemporalTable TIDEMARK_STATEMENT = TemporalTable.forTable("bench_tms")
            .triggerMode(TriggerMode.STATEMENT).build();
    /** Tidemark ROW with the {@code SET search_path} clause its functions carried before it was replaced by qualification. */
    static final TemporalTable PINNED = TemporalTable.forTable("bench_tmp").build();
    /** Cost breakdown of the row trigger: without the open-version index. */
    static final TemporalTable NO_OPEN_INDEX = TemporalTable.forTable("bench_tmo").build();
    /** Cost breakdown: without the INSERT's clamp lookup (so every INSERT starts chain 1 at now()). */
    static final TemporalTable NO_CLAMP = TemporalTable.forTable("bench_tmc").build();
    /** Cost breakdown: without the chain-start index and the INSERT's ON CONFLICT on it. */
    static final TemporalTable NO_CHAIN_INDEX = TemporalTable.forTable("bench_tmx").build();
    /** Every Tidemark table of the run: the product's two modes, then the variants above. */
    static final List<TemporalTable> TIDEMARK_TABLES = List.of(TIDEMARK, TIDEMARK_STATEMENT, PINNED, NO_OPEN_INDEX,
            NO_CLAMP, NO_CHAIN_INDEX);
    static final ReferenceShape REFERENCE = ReferenceShape.of("bench_ref", "id", NAMES).withSettingsPrefix("tidemark");

    private BenchSchema() {
    }

    static void create(DataSource ds, int keys, int versions) throws SQLException {
        Db.exec(ds, "CREATE TABLE bench_plain (" + COLUMNS + "); CREATE TABLE bench_ref (" + COLUMNS + ")");
        for (TemporalTable table : TIDEMARK_TABLES) {
            Db.exec(ds, "CREATE TABLE " + table.table().quoted() + " (" + COLUMNS + ")");
            table.install(ds);
        }
        Db.exec(ds, "ALTER FUNCTION bench_tmp_history_write() SET search_path = pg_catalog, pg_temp;"
                + " DROP INDEX bench_tmo_history_open_uq; DROP INDEX bench_tmx_history_chain_uq");
        replaceBody(ds, "bench_tmc_history_write", body -> body.replaceAll(
                "(?s)LEFT JOIN LATERAL \\(.*?\\) AS l ON true\n\\s*WHERE COALESCE\\(l\\.valid_to[^\n]*",
                "LEFT JOIN (SELECT NULL::pg_catalog.timestamptz AS valid_to, NULL::integer AS chain_no) AS l ON true"));
        replaceBody(ds, "bench_tmx_history_write", body -> body.replaceAll("\\s*ON CONFLICT [^\\n]* DO NOTHING", ""));
        REFERENCE.install(ds, TYPES);
        DesignBounds.create(ds);
        String chain = "SELECT g, g % 1000, 100 + v, 'active', 'version ' || v, now() - (" + versions + " - v) * interval '1 day',"
                + " now() - (" + versions + " - v + 1) * interval '1 day',"
                + " CASE WHEN v = " + versions + " THEN 'infinity' ELSE now() - (" + versions + " - v) * interval '1 day' END,"
                + " CASE WHEN v = 1 THEN 1 ELSE 2 END"
                + " FROM generate_series(1, " + keys + ") g CROSS JOIN generate_series(1, " + versions + ") v";
        String live = "SELECT g, g % 1000, 100 + " + versions + ", 'active', 'version " + versions + "',"
                + " now() FROM generate_series(1, " + keys + ") g";
        Db.exec(ds, "INSERT INTO bench_plain " + live);
        for (String bound : new String[] {DesignBounds.BARE, DesignBounds.BARE_INVOKER, DesignBounds.ONE_ROW}) {
            Db.exec(ds, "ALTER TABLE " + bound + " DISABLE TRIGGER USER; INSERT INTO " + bound + " " + live
                    + "; ALTER TABLE " + bound + " ENABLE TRIGGER USER");
        }
        Db.exec(ds, "INSERT INTO bench_cur (" + String.join(", ", NAMES) + ", tm_valid_from) SELECT *, now() - interval '1 day'"
                + " FROM (" + live + ") AS l");
        Db.exec(ds, "INSERT INTO bench_cur_history (id, account, amount, status, note, updated_at, valid_from, valid_to,"
                + " operation) SELECT id, account, amount, status, note, updated_at, valid_from, valid_to, operation"
                + " FROM (" + chain + ") AS c(id, account, amount, status, note, updated_at, valid_from, valid_to,"
                + " operation) WHERE valid_to <> 'infinity'");
        Db.exec(ds, "INSERT INTO bench_one_history (id, account, amount, status, note, updated_at, valid_from,"
                + " operation) SELECT id, account, amount, status, note, updated_at, valid_from, operation"
                + " FROM (" + chain + ") AS c(id, account, amount, status, note, updated_at, valid_from, valid_to,"
                + " operation)");
        // Histories are loaded directly (the trigger would take minutes for a million rows); the rows are exactly
        // what the trigger writes, which the invariant checker confirms after the run.
        for (String tm : TIDEMARK_TABLES.stream().map(t -> t.table().name()).toList()) {
            Db.exec(ds, "ALTER TABLE " + tm + " DISABLE TRIGGER USER; INSERT INTO " + tm + " " + live
                    + "; ALTER TABLE " + tm + " ENABLE TRIGGER USER");
            Db.exec(ds, "TRUNCATE " + tm + "_history; INSERT INTO " + tm + "_history (id, account, amount, status, note,"
                    + " updated_at, valid_from, valid_to, operation, chain_no) SELECT id, account, amount, status, note,"
                    + " updated_at, valid_from, valid_to, operation, 1 FROM (" + chain + ") AS c(id, account, amount,"
                    + " status, note, updated_at, valid_from, valid_to, operation)");
        }
        Db.exec(ds, "ALTER TABLE bench_ref DISABLE TRIGGER USER; INSERT INTO bench_ref " + live
                + "; ALTER TABLE bench_ref ENABLE TRIGGER USER");
        Db.exec(ds, "INSERT INTO bench_ref_history (id, account, amount, status, note, updated_at, valid_from, valid_to,"
                + " operation) SELECT id, account, amount, status, note, updated_at, valid_from, valid_to, operation"
                + " FROM (" + chain + ") AS c(id, account, amount, status, note, updated_at, valid_from, valid_to,"
                + " operation)");
        Db.exec(ds, "VACUUM ANALYZE");
    }

    /** Rewrites a generated trigger function's body for a cost-breakdown variant; fails if nothing changed. */
    private static void replaceBody(DataSource ds, String function, java.util.function.UnaryOperator<String> edit) {
        String body = (String) Db.scalar(ds, "SELECT prosrc FROM pg_proc WHERE proname = ?", function);
        String edited = edit.apply(body);
        if (edited.equals(body)) {
            throw new IllegalStateException("the variant's edit did not apply to " + function);
        }
        Db.exec(ds, "CREATE OR REPLACE FUNCTION " + function + "() RETURNS trigger LANGUAGE plpgsql SECURITY DEFINER"
                + " AS $variant$" + edited + "$variant$");
    }

}
