package io.tidemark.benchmarks.history;

import io.tidemark.history.Db;
import io.tidemark.history.HistoryStorage;
import io.tidemark.history.ReferenceShape;
import io.tidemark.history.TemporalTable;
import io.tidemark.history.TriggerMode;

import javax.sql.DataSource;
import java.sql.SQLException;
import java.util.List;

/**
 * Identical tables: {@code bench_plain} (no history), {@code bench_tm} (Tidemark's row trigger, the default
 * configuration), {@code bench_tms} (Tidemark's statement triggers), {@code bench_tmcur} and {@code bench_tmcurs} (the
 * current version kept in the table, {@code HistoryStorage.CURRENT_IN_TABLE}, with row triggers and with DELETE archived
 * per statement), {@code bench_ref} (the reference trigger of
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
    /** The current version kept in the table (row triggers on UPDATE and DELETE, none on INSERT). */
    static final TemporalTable TIDEMARK_CURRENT = TemporalTable.forTable("bench_tmcur")
            .storage(HistoryStorage.CURRENT_IN_TABLE).build();
    /** The same with DELETE archived once per statement (TriggerMode.STATEMENT). */
    static final TemporalTable TIDEMARK_CURRENT_STATEMENT = TemporalTable.forTable("bench_tmcurs")
            .storage(HistoryStorage.CURRENT_IN_TABLE).triggerMode(TriggerMode.STATEMENT).build();
    /** Every Tidemark table of the run: each shape in its two modes. */
    static final List<TemporalTable> TIDEMARK_TABLES = List.of(TIDEMARK, TIDEMARK_STATEMENT, TIDEMARK_CURRENT,
            TIDEMARK_CURRENT_STATEMENT);
    static final ReferenceShape REFERENCE = ReferenceShape.of("bench_ref", "id", NAMES).withSettingsPrefix("tidemark");

    private BenchSchema() {
    }

    static void create(DataSource ds, int keys, int versions) throws SQLException {
        Db.exec(ds, "CREATE TABLE bench_plain (" + COLUMNS + "); CREATE TABLE bench_ref (" + COLUMNS + ")");
        for (TemporalTable table : TIDEMARK_TABLES) {
            Db.exec(ds, "CREATE TABLE " + table.table().quoted() + " (" + COLUMNS + ")");
            table.install(ds);
        }
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
        for (String tm : List.of(TIDEMARK.table().name(), TIDEMARK_STATEMENT.table().name())) {
            Db.exec(ds, "ALTER TABLE " + tm + " DISABLE TRIGGER USER; INSERT INTO " + tm + " " + live
                    + "; ALTER TABLE " + tm + " ENABLE TRIGGER USER");
            Db.exec(ds, "TRUNCATE " + tm + "_history; INSERT INTO " + tm + "_history (id, account, amount, status, note,"
                    + " updated_at, valid_from, valid_to, operation, chain_no) SELECT id, account, amount, status, note,"
                    + " updated_at, valid_from, valid_to, operation, 1 FROM (" + chain + ") AS c(id, account, amount,"
                    + " status, note, updated_at, valid_from, valid_to, operation)");
        }
        // The current-in-table shape: the last version of each chain is the row (started a day ago), the others
        // are closed versions. One transaction, so one now(): the row starts exactly where its last closed version
        // ends, which the shape's archiving trigger checks (a start elsewhere reads as a change this snapshot missed).
        for (String cur : List.of(TIDEMARK_CURRENT.table().name(), TIDEMARK_CURRENT_STATEMENT.table().name())) {
            Db.exec(ds, "ALTER TABLE " + cur + " DISABLE TRIGGER USER; INSERT INTO " + cur + " (" + String.join(", ", NAMES)
                    + ", tidemark_valid_from) SELECT *, now() - interval '1 day' FROM (" + live + ") AS l;"
                    + " ALTER TABLE " + cur + " ENABLE TRIGGER USER;"
                    + " INSERT INTO " + cur + "_history_closed (id, account, amount, status, note, updated_at, valid_from,"
                    + " valid_to, operation, chain_no) SELECT id, account, amount, status, note, updated_at, valid_from,"
                    + " valid_to, operation, 1 FROM (" + chain + ") AS c(id, account, amount, status, note, updated_at,"
                    + " valid_from, valid_to, operation) WHERE valid_to <> 'infinity'");
        }
        Db.exec(ds, "ALTER TABLE bench_ref DISABLE TRIGGER USER; INSERT INTO bench_ref " + live
                + "; ALTER TABLE bench_ref ENABLE TRIGGER USER");
        Db.exec(ds, "INSERT INTO bench_ref_history (id, account, amount, status, note, updated_at, valid_from, valid_to,"
                + " operation) SELECT id, account, amount, status, note, updated_at, valid_from, valid_to, operation"
                + " FROM (" + chain + ") AS c(id, account, amount, status, note, updated_at, valid_from, valid_to,"
                + " operation)");
        Db.exec(ds, "VACUUM ANALYZE");
    }

}
