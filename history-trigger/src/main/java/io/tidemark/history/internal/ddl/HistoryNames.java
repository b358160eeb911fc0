package io.tidemark.history.internal.ddl;

import io.tidemark.history.HistoryStorage;
import io.tidemark.history.TemporalTable;
import io.tidemark.history.TriggerMode;
import io.tidemark.sync.ErrorCode;
import io.tidemark.sync.TidemarkException;
import io.tidemark.sync.internal.sql.PgName;

import java.nio.charset.StandardCharsets;
import java.util.LinkedHashMap;
import java.util.Map;

/**
 * Every name Tidemark generates for one temporal table. All derive from the history table's name, so they are
 * unique per history table; each is checked against PostgreSQL's 63-byte limit, because the server would silently
 * truncate a longer one and two tables could then share (and overwrite) one function.
 */
public final class HistoryNames {

    private final PgName table;
    private final PgName historyTable;
    private final PgName writeFunction;
    private final PgName truncateFunction;
    private final PgName insertFunction;
    private final PgName asOfFunction;
    private final String rowTrigger;
    private final String truncateTrigger;
    private final String insertTrigger;
    private final String updateTrigger;
    private final String deleteTrigger;
    private final String keyIndex;
    private final String openIndex;
    private final String chainIndex;
    private final String periodIndex;
    private final HistoryStorage storage;
    private final PgName closedTable;
    private final String closedKeyIndex;
    private final String closedChainIndex;
    private final String closedPeriodIndex;

    private HistoryNames(PgName table, PgName historyTable, HistoryStorage storage) {
        this.storage = storage;
        this.table = table;
        this.historyTable = historyTable;
        String schema = historyTable.schema().orElseThrow();
        String base = historyTable.name();
        Map<String, String> generated = new LinkedHashMap<>();
        generated.put("history table", base);
        generated.put("write function", base + "_write");
        generated.put("truncate function", base + "_truncate");
        generated.put("row trigger", base + "_trg");
        generated.put("truncate trigger", base + "_truncate_trg");
        generated.put("statement insert trigger", base + "_ins_trg");
        generated.put("statement update trigger", base + "_upd_trg");
        generated.put("statement delete trigger", base + "_del_trg");
        generated.put("key index", base + "_key_idx");
        generated.put("open-version index", base + "_open_uq");
        generated.put("chain-start index", base + "_chain_uq");
        generated.put("period index", base + "_period_idx");
        generated.put("as-of function", table.name() + "_as_of");
        if (storage == HistoryStorage.CURRENT_IN_TABLE) {
            generated.put("closed-versions table", base + "_closed");
            generated.put("insert function", base + "_insert");
            generated.put("closed-versions key index", base + "_closed_key_idx");
            generated.put("closed-versions chain-start index", base + "_closed_chain_uq");
            generated.put("closed-versions period index", base + "_closed_period_idx");
        }
        generated.forEach((what, name) -> check(table, what, name));
        this.writeFunction = PgName.of(schema, generated.get("write function"));
        this.truncateFunction = PgName.of(schema, generated.get("truncate function"));
        this.asOfFunction = PgName.of(table.schema().orElseThrow(), generated.get("as-of function"));
        this.rowTrigger = generated.get("row trigger");
        this.truncateTrigger = generated.get("truncate trigger");
        this.insertTrigger = generated.get("statement insert trigger");
        this.updateTrigger = generated.get("statement update trigger");
        this.deleteTrigger = generated.get("statement delete trigger");
        this.keyIndex = generated.get("key index");
        this.openIndex = generated.get("open-version index");
        this.chainIndex = generated.get("chain-start index");
        this.periodIndex = generated.get("period index");
        this.closedTable = PgName.of(schema, base + "_closed");
        this.insertFunction = PgName.of(schema, base + "_insert");
        this.closedKeyIndex = base + "_closed_key_idx";
        this.closedChainIndex = base + "_closed_chain_uq";
        this.closedPeriodIndex = base + "_closed_period_idx";
    }

    /** The names {@code config} generates. */
    public static HistoryNames of(TemporalTable config) {
        return new HistoryNames(table(config), history(config), config.storage());
    }

    /** The configured table as a name the SQL generators quote. */
    public static PgName table(TemporalTable config) {
        return PgName.of(config.table().schema(), config.table().name());
    }

    /** The configured (or default) history table as a name the SQL generators quote. */
    public static PgName history(TemporalTable config) {
        return PgName.of(config.historyTable().schema(), config.historyTable().name());
    }

    /** The names for {@code table}, whose history is {@code historyTable} or, when null, {@code <table>_history}. */
    public static HistoryNames of(PgName table, PgName historyTable, HistoryStorage storage) {
        PgName history = historyTable != null ? historyTable
                : PgName.of(table.schema().orElseThrow(), checkedHistoryName(table));
        return new HistoryNames(table, history, storage);
    }

    private static String checkedHistoryName(PgName table) {
        String name = table.name() + "_history";
        check(table, "history table", name);
        return name;
    }

    private static void check(PgName table, String what, String name) {
        int bytes = name.getBytes(StandardCharsets.UTF_8).length;
        if (bytes > PgName.MAX_IDENTIFIER_BYTES) {
            throw TidemarkException.forObject(ErrorCode.INVALID_IDENTIFIER, table.toString(), "the generated " + what
                    + " name \"" + name + "\" is " + bytes + " bytes; PostgreSQL keeps " + PgName.MAX_IDENTIFIER_BYTES
                    + " and would silently truncate it, so two tables could end up sharing one object. Choose a shorter"
                    + " history table name with TemporalTable.Builder.historyTable(...)"
                    + (what.equals("as-of function") ? " (the as-of function is named after the table itself:"
                    + " rename the table or shorten it)" : ""));
        }
    }

    public PgName table() {
        return table;
    }

    /**
     * Where history is read: the history table, or with {@link HistoryStorage#CURRENT_IN_TABLE} the view of the same
     * name that presents the closed versions and the table's current rows in the history table's columns.
     */
    public PgName historyTable() {
        return historyTable;
    }

    /** Where history rows are written (and pruned): the history table, or the closed-versions table. */
    public PgName storedHistory() {
        return storage == HistoryStorage.CURRENT_IN_TABLE ? closedTable : historyTable;
    }

    /** {@code <history>_closed}: the superseded versions and tombstones of {@link HistoryStorage#CURRENT_IN_TABLE}. */
    public PgName closedTable() {
        return closedTable;
    }

    public String closedKeyIndex() {
        return closedKeyIndex;
    }

    public String closedChainIndex() {
        return closedChainIndex;
    }

    public String closedPeriodIndex() {
        return closedPeriodIndex;
    }

    /** The indexes this storage creates on the table history is written to. */
    public java.util.List<String> indexes(boolean withPeriodIndex) {
        java.util.List<String> indexes = new java.util.ArrayList<>(storage == HistoryStorage.CURRENT_IN_TABLE
                ? java.util.List.of(closedKeyIndex, closedChainIndex) : java.util.List.of(keyIndex, openIndex, chainIndex));
        if (withPeriodIndex) {
            indexes.add(storage == HistoryStorage.CURRENT_IN_TABLE ? closedPeriodIndex : periodIndex);
        }
        return indexes;
    }

    /** The triggers that write history for this storage in {@code mode}. */
    public java.util.List<String> writeTriggers(TriggerMode mode, HistoryStorage storage) {
        return storage == HistoryStorage.CURRENT_IN_TABLE ? statementTriggers() : writeTriggers(mode);
    }

    /** The row trigger's function: {@code <history>_write()}. */
    public PgName writeFunction() {
        return writeFunction;
    }

    /**
     * CURRENT_IN_TABLE: the insert trigger's function, {@code <history>_insert()}, which runs with the inserting
     * role's rights (it writes nothing but the row being inserted).
     */
    public PgName insertFunction() {
        return insertFunction;
    }

    /** The TRUNCATE trigger's function: {@code <history>_truncate()}. */
    public PgName truncateFunction() {
        return truncateFunction;
    }

    /** {@code <table>_as_of(timestamptz)}, in the table's schema, returning the table's row type. */
    public PgName asOfFunction() {
        return asOfFunction;
    }

    public String rowTrigger() {
        return rowTrigger;
    }

    public String truncateTrigger() {
        return truncateTrigger;
    }

    /** Every trigger a shape or mode of this table may have generated: what uninstall and migrate drop. */
    public java.util.List<String> generatedTriggers() {
        return java.util.List.of(insertTrigger, updateTrigger, deleteTrigger, rowTrigger, truncateTrigger);
    }

    /** The statement-level triggers of {@link TriggerMode#STATEMENT}: insert, update, delete. */
    public java.util.List<String> statementTriggers() {
        return java.util.List.of(insertTrigger, updateTrigger, deleteTrigger);
    }

    /** The triggers that write history in {@code mode}. */
    public java.util.List<String> writeTriggers(TriggerMode mode) {
        return mode == TriggerMode.ROW ? java.util.List.of(rowTrigger) : statementTriggers();
    }

    public String keyIndex() {
        return keyIndex;
    }

    public String openIndex() {
        return openIndex;
    }

    public String chainIndex() {
        return chainIndex;
    }

    public String periodIndex() {
        return periodIndex;
    }
}
