package io.tidemark.history.internal.ddl;

import io.tidemark.history.internal.HistoryTransactions;
import io.tidemark.sync.internal.jdbc.Jdbc;
import io.tidemark.history.internal.catalog.CatalogObjects;
import io.tidemark.history.internal.catalog.CatalogReader;
import io.tidemark.history.internal.catalog.Column;
import io.tidemark.history.internal.catalog.Registry;
import io.tidemark.history.internal.catalog.RegistryEntry;
import io.tidemark.history.internal.catalog.TableShape;
import io.tidemark.history.Drift;
import io.tidemark.history.internal.ddl.HistoryNames;
import io.tidemark.history.TemporalTable;
import io.tidemark.history.VerifyReport;
import io.tidemark.sync.ErrorCode;
import io.tidemark.sync.TidemarkException;
import io.tidemark.sync.internal.sql.PgName;
import io.tidemark.sync.internal.sql.SqlTemplate;

import javax.sql.DataSource;
import java.sql.Connection;
import java.sql.SQLException;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;

/** verify(), evolve() and uninstall(): comparing what is installed with what the configuration generates. */
public final class SchemaMaintenance {

    private final TemporalTable config;
    private final String object;

    public SchemaMaintenance(TemporalTable config) {
        this.config = config;
        this.object = HistoryNames.table(config).toString();
    }

    public VerifyReport verify(DataSource dataSource) {
        return HistoryTransactions.readOnly(dataSource, object, "verifying history", c -> {
            CatalogReader.pinSearchPath(c);
            Optional<RegistryEntry> entry = Registry.find(c, HistoryNames.table(config));
            if (entry.isEmpty()) {
                return new VerifyReport(object, List.of(new Drift(Drift.Kind.NOT_INSTALLED, HistoryNames.table(config)
                        + " is not registered as a temporal table; run install()")), List.of());
            }
            return new VerifyReport(object, drifts(c, entry.get(), CatalogReader.read(c, config)), List.of());
        });
    }

    public VerifyReport evolve(DataSource dataSource) {
        return HistoryTransactions.inSchemaTransaction(dataSource, object, "evolving history", c -> {
            CatalogReader.pinSearchPath(c);
            Optional<RegistryEntry> entry = Registry.find(c, HistoryNames.table(config));
            if (entry.isEmpty()) {
                throw TidemarkException.forObject(ErrorCode.SCHEMA_DRIFT, object, HistoryNames.table(config)
                        + " is not registered as a temporal table; there is nothing to evolve. Run install() first");
            }
            CatalogReader.read(c, config); // explanatory errors before the lock
            Jdbc.execute(c, new HistorySql(config, null).lockTable().sql());
            return evolveLocked(c, entry.get(), CatalogReader.read(c, config));
        });
    }

    /**
     * install() and evolve() never switch storage shapes: {@code migrate()} converts a history between them (it
     * rewrites the history, and to CURRENT_IN_TABLE every row of the table once, so it is a step of its own).
     */
    static TidemarkException storageChanged(String object, RegistryEntry entry, TemporalTable config) {
        return TidemarkException.forObject(ErrorCode.SCHEMA_DRIFT, object, "history is installed with storage "
                + entry.storage() + " but configured with " + config.storage() + "; run migrate() to convert it (one"
                + " transaction that keeps every version), or keep storage(HistoryStorage." + entry.storage() + ")");
    }

    /** Repairs drift; the caller holds the table lock and the transaction. */
    VerifyReport evolveLocked(Connection c, RegistryEntry entry, TableShape shape) throws SQLException {
        List<Drift> drifts = drifts(c, entry, shape);
        if (drifts.isEmpty()) {
            return new VerifyReport(object, drifts, List.of());
        }
        List<String> refused = drifts.stream().filter(d -> d.kind() == Drift.Kind.COLUMN_TYPE_CHANGED)
                .map(Drift::detail).toList();
        if (!refused.isEmpty()) {
            throw TidemarkException.forObject(ErrorCode.SCHEMA_CHANGE_REFUSED, object, String.join("; ", refused)
                    + ". History keeps every past value in the old type, so Tidemark will not change it. Either"
                    + " rename the history column by hand (ALTER TABLE " + entry.historyTable() + " RENAME COLUMN ...)"
                    + " and evolve again, which adds a fresh column of the new type, or uninstall and install with a"
                    + " new history table. Nothing was changed.");
        }
        List<String> conflicts = drifts.stream().filter(d -> d.kind() == Drift.Kind.CONFLICTING_TRIGGER)
                .map(Drift::detail).toList();
        if (!conflicts.isEmpty()) {
            throw TidemarkException.forObject(ErrorCode.SCHEMA_UNSUPPORTED, object, String.join("; ", conflicts)
                    + ". Nothing was changed.");
        }
        HistorySql sql = new HistorySql(config, shape);
        CurrentInTableSql current = sql.current();
        PgName stored = current != null ? HistoryNames.of(config).closedTable() : entry.historyTable();
        if (drifts.stream().anyMatch(d -> d.kind() == Drift.Kind.HISTORY_TABLE_MISSING)) {
            throw TidemarkException.forObject(ErrorCode.SCHEMA_DRIFT, object, (current != null
                    ? "closed-versions table " : "history table ") + stored + " is gone, and with it the history;"
                    + " evolve cannot restore it. Run uninstall() and install() to start a new history.");
        }
        List<String> actions = new ArrayList<>();
        // The versioned columns are checked against where history is stored (the view may be gone, see drifts()).
        Map<String, String> historyColumns = CatalogObjects.columns(c, stored);
        boolean viewChanged = drifts.stream().anyMatch(d -> d.kind() == Drift.Kind.HISTORY_VIEW_MISSING
                || d.kind() == Drift.Kind.HISTORY_VIEW_CHANGED);
        for (Column column : shape.versioned()) {
            if (!historyColumns.containsKey(column.name())) {
                execute(c, current != null ? current.addClosedColumn(column.quoted() + " " + column.typeDefinition())
                                : sql.addHistoryColumn(column.quoted() + " " + column.typeDefinition()), actions,
                        "added column " + column.name() + " " + column.typeDefinition() + " to " + stored);
                viewChanged = true;
            }
        }
        if (current != null) {
            Jdbc.execute(c, current.setDefaults().sql());
            boolean obsoleteChecks = drifts.stream().anyMatch(d -> d.kind() == Drift.Kind.OBSOLETE_CONSTRAINT);
            for (CurrentInTableSql.ObsoleteCheck check : obsoleteChecks ? current.obsoleteChecks(c)
                    : List.<CurrentInTableSql.ObsoleteCheck>of()) {
                execute(c, check.drop(), actions, "dropped constraint " + check.name() + " of " + check.table());
            }
        }
        if (current != null && (viewChanged || !names(entry.versioned()).equals(names(shape.versioned())))) {
            // A view's columns can only be appended to; it is rebuilt (with its grants, below).
            refuseDependentViews(c, entry.historyTable(), "evolve() rebuilds it");
            // Readers keep their access: the view's grants are given again to the rebuilt view.
            List<String> grants = CatalogObjects.grants(c, entry.historyTable());
            Jdbc.execute(c, current.dropView().sql());
            execute(c, current.createView(orphans(entry, shape)), actions, "rebuilt view " + entry.historyTable());
            for (String grant : grants) {
                Jdbc.execute(c, grant);
            }
        }
        if (config.sessionUserColumn() && !historyColumns.containsKey(CatalogReader.SESSION_USER_COLUMN)) {
            execute(c, sql.addHistoryColumn(HistorySql.sessionUserColumnDefinition()), actions,
                    "added column " + CatalogReader.SESSION_USER_COLUMN);
        }
        if (config.transactionIdColumn() && !historyColumns.containsKey(CatalogReader.TRANSACTION_ID_COLUMN)) {
            execute(c, sql.addHistoryColumn(HistorySql.transactionIdColumnDefinition()), actions,
                    "added column " + CatalogReader.TRANSACTION_ID_COLUMN);
        }
        for (SqlStep step : sql.createIndexes()) {
            Jdbc.execute(c, step.sql()); // IF NOT EXISTS: only missing ones are built
        }
        for (SqlStep step : sql.dropOtherModeTriggers()) {
            Jdbc.execute(c, step.sql());
        }
        for (SqlStep step : Installer.functionsAndTriggers(sql)) {
            Jdbc.execute(c, step.sql());
        }
        HistoryNames names = HistoryNames.of(config);
        List<String> triggers = new ArrayList<>(names.writeTriggers(config.triggerMode(), config.storage()));
        triggers.add(names.truncateTrigger());
        for (String trigger : triggers) {
            // CREATE OR REPLACE TRIGGER keeps a disabled trigger disabled.
            Jdbc.execute(c, SqlTemplate.of("ALTER TABLE {{table}} ENABLE TRIGGER {{trigger}}")
                    .with("table", HistoryNames.table(config).quoted()).with("trigger", PgName.quote(trigger)).render());
        }
        List<Column> orphans = orphans(entry, shape);
        Jdbc.execute(c, sql.register(RegistryEntry.of(config, shape, orphans, sql)).sql());
        for (Drift drift : drifts) {
            if (drift.kind() != Drift.Kind.COLUMN_ADDED) {
                actions.add("repaired " + drift);
            }
        }
        return new VerifyReport(object, drifts, actions);
    }

    public void uninstall(DataSource dataSource) {
        HistoryTransactions.inSchemaTransaction(dataSource, object, "uninstalling history", c -> {
            CatalogReader.pinSearchPath(c);
            HistoryNames names = HistoryNames.of(config);
            // The shape installed decides what to remove; without a registry row, the configured one.
            boolean currentInTable = (Registry.exists(c) ? Registry.find(c, HistoryNames.table(config))
                    .map(RegistryEntry::storage).orElse(config.storage()) : config.storage())
                    == io.tidemark.history.HistoryStorage.CURRENT_IN_TABLE;
            HistorySql plain = new HistorySql(config, null);
            boolean tableExists = CatalogReader.tableOid(c, HistoryNames.table(config)).isPresent();
            if (tableExists) {
                Jdbc.execute(c, plain.lockTable().sql()); // first, as install and evolve do
            }
            if (currentInTable) {
                String schema = names.historyTable().schema().orElseThrow();
                if (CatalogObjects.relationKind(c, schema, names.historyTable().name()).filter("v"::equals).isPresent()) {
                    refuseDependentViews(c, names.historyTable(), "uninstall() drops it");
                    Jdbc.execute(c, new CurrentInTableSql(plain).dropView().sql());
                }
            }
            if (tableExists) {
                Map<String, String> columns = CatalogObjects.columns(c, HistoryNames.table(config));
                if (currentInTable && columns.containsKey(CatalogReader.CURRENT_FROM_COLUMN)
                        && columns.containsKey(CatalogReader.CURRENT_CONTEXT_COLUMN)) {
                    Jdbc.execute(c, new CurrentInTableSql(plain).releaseCurrentColumns().sql());
                }
                for (String trigger : names.generatedTriggers()) {
                    Jdbc.execute(c, SqlTemplate.of("DROP TRIGGER IF EXISTS {{trigger}} ON {{table}}")
                            .with("trigger", PgName.quote(trigger)).with("table", HistoryNames.table(config).quoted())
                            .render());
                }
            }
            Jdbc.execute(c, SqlTemplate.of("""
                    DROP FUNCTION IF EXISTS {{write_function}}();
                    DROP FUNCTION IF EXISTS {{insert_function}}();
                    DROP FUNCTION IF EXISTS {{truncate_function}}();
                    DROP FUNCTION IF EXISTS {{as_of_function}}(timestamptz)""")
                    .with("write_function", names.writeFunction().quoted())
                    .with("insert_function", names.insertFunction().quoted())
                    .with("truncate_function", names.truncateFunction().quoted())
                    .with("as_of_function", names.asOfFunction().quoted())
                    .render());
            if (Registry.exists(c)) {
                Registry.delete(c, HistoryNames.table(config));
            }
            return null;
        });
    }

    /** Every difference between the registry, the live catalog and what the configuration generates. */
    List<Drift> drifts(Connection c, RegistryEntry entry, TableShape shape) throws SQLException {
        List<Drift> drifts = new ArrayList<>();
        HistoryNames names = HistoryNames.of(config);
        if (!entry.historyTable().equals(names.historyTable())) {
            throw TidemarkException.forObject(ErrorCode.INVALID_CONFIGURATION, object, "it is installed with history"
                    + " table " + entry.historyTable() + " but configured with " + names.historyTable()
                    + "; configure the installed name, or uninstall first");
        }
        if (entry.storage() != config.storage()) {
            throw storageChanged(object, entry, config);
        }
        if (!RegistryEntry.sameJson(entry.optionsJson(), RegistryEntry.optionsJson(config))) {
            drifts.add(new Drift(Drift.Kind.OPTIONS_CHANGED, "installed with " + entry.optionsJson()
                    + ", configured with " + RegistryEntry.optionsJson(config)));
        }
        boolean currentInTable = config.storage() == io.tidemark.history.HistoryStorage.CURRENT_IN_TABLE;
        String historySchema = entry.historyTable().schema().orElseThrow();
        // Where the history itself is: the history table, or the closed versions of CURRENT_IN_TABLE (the view of
        // the history table's name only presents them, and a DROP COLUMN ... CASCADE drops it with nothing lost).
        PgName stored = currentInTable ? names.closedTable() : entry.historyTable();
        if (!CatalogObjects.relationExists(c, historySchema, stored.name())) {
            drifts.add(new Drift(Drift.Kind.HISTORY_TABLE_MISSING, (currentInTable ? "closed-versions table "
                    : "history table ") + stored + " does not exist"));
            return drifts;
        }
        Optional<String> viewKind = currentInTable
                ? CatalogObjects.relationKind(c, historySchema, entry.historyTable().name()) : Optional.empty();
        if (currentInTable && viewKind.isEmpty()) {
            drifts.add(new Drift(Drift.Kind.HISTORY_VIEW_MISSING, "view " + entry.historyTable() + " is missing (a"
                    + " DROP COLUMN ... CASCADE of a versioned column drops it); the closed versions in " + stored
                    + " are intact and evolve() recreates it"));
        }
        // The history table itself says which type history holds for a column; the registry says what was versioned.
        Map<String, String> historyColumns = CatalogObjects.columns(c, stored);
        Map<String, Column> registered = byName(entry.versioned());
        Map<String, Column> current = byName(shape.versioned());
        for (Column column : shape.versioned()) {
            String held = historyColumns.get(column.name());
            if (held == null) {
                drifts.add(new Drift(Drift.Kind.COLUMN_ADDED, "column " + column.name() + " "
                        + column.typeDefinition() + " is not in history yet"));
            } else if (!held.equals(column.typeDefinition())) {
                drifts.add(new Drift(Drift.Kind.COLUMN_TYPE_CHANGED, "column " + column.name() + " changed type from "
                        + held + " to " + column.typeDefinition()));
            } else if (!registered.containsKey(column.name())) {
                drifts.add(new Drift(Drift.Kind.COLUMN_ADDED, "column " + column.name()
                        + " is back in the table; its orphaned history column will be written again"));
            }
        }
        for (Column column : entry.versioned()) {
            if (!current.containsKey(column.name())) {
                drifts.add(new Drift(Drift.Kind.COLUMN_DROPPED, "column " + column.name()
                        + " is no longer versioned (dropped or excluded); history keeps it as an orphan"));
            }
        }
        for (String column : currentInTable ? CatalogReader.CLOSED_HISTORY_COLUMNS
                : CatalogReader.FIXED_HISTORY_COLUMNS) {
            if (!historyColumns.containsKey(column)) {
                drifts.add(new Drift(Drift.Kind.HISTORY_COLUMN_MISSING, "history table " + stored
                        + " has no column " + column));
            }
        }
        if (currentInTable) {
            currentInTableDrifts(c, entry, shape, viewKind, drifts);
        }
        for (String index : names.indexes(config.periodIndex())) {
            if (!CatalogObjects.relationExists(c, historySchema, index)) {
                drifts.add(new Drift(Drift.Kind.INDEX_MISSING, "index " + historySchema + "." + index + " is missing"));
            }
        }
        HistorySql sql = new HistorySql(config, shape);
        checkFunction(c, names.writeFunction(), "", sql.writeFunctionBody(), Rights.DEFINER, drifts, entry);
        checkFunction(c, names.truncateFunction(), "", sql.truncateFunctionBody(), Rights.DEFINER, drifts, null);
        checkFunction(c, names.asOfFunction(), "timestamp with time zone", sql.asOfFunctionBody(),
                Rights.INVOKER_PINNED, drifts, null);
        if (sql.current() != null) {
            checkFunction(c, names.insertFunction(), "", sql.current().insertBody(), Rights.INVOKER, drifts, null);
            for (CurrentInTableSql.ExpectedTrigger trigger : sql.current().expectedTriggers(entry.versioned())) {
                if (!trigger.name().equals(names.truncateTrigger())) {
                    checkTrigger(c, trigger.name(), trigger.function(), drifts);
                }
            }
        } else {
            for (String trigger : names.writeTriggers(config.triggerMode(), config.storage())) {
                checkTrigger(c, trigger, names.writeFunction(), drifts);
            }
        }
        checkTrigger(c, names.truncateTrigger(), names.truncateFunction(), drifts);
        return drifts;
    }

    /**
     * CURRENT_IN_TABLE: the table's two columns and their defaults, the view, and the triggers' timing, events and
     * WHEN columns (their definitions as PostgreSQL records them; the deparsed text is not the generated text, so
     * what can drift is compared: what fires, when, and on which columns).
     */
    private void currentInTableDrifts(Connection c, RegistryEntry entry, TableShape shape, Optional<String> viewKind,
                                      List<Drift> drifts) throws SQLException {
        HistoryNames names = HistoryNames.of(config);
        PgName table = HistoryNames.table(config);
        CurrentInTableSql current = new HistorySql(config, shape).current();
        Map<String, String> tableColumns = CatalogObjects.columns(c, table);
        for (String column : List.of(CatalogReader.CURRENT_FROM_COLUMN, CatalogReader.CURRENT_CONTEXT_COLUMN)) {
            if (!tableColumns.containsKey(column)) {
                drifts.add(new Drift(Drift.Kind.HISTORY_COLUMN_MISSING, "table " + table + " has no column " + column
                        + ", which holds its current versions"));
            }
        }
        String contextDefault = CatalogObjects.columnDefault(c, table, CatalogReader.CURRENT_CONTEXT_COLUMN).orElse(null);
        if (tableColumns.containsKey(CatalogReader.CURRENT_CONTEXT_COLUMN)
                && !current.contextDefaultMatches(contextDefault)) {
            drifts.add(new Drift(Drift.Kind.COLUMN_DEFAULT_CHANGED, "the default of " + table + "."
                    + CatalogReader.CURRENT_CONTEXT_COLUMN + " does not read the settings " + config.settingsPrefix()
                    + ".*: " + contextDefault));
        }
        String fromDefault = CatalogObjects.columnDefault(c, table, CatalogReader.CURRENT_FROM_COLUMN).orElse(null);
        if (tableColumns.containsKey(CatalogReader.CURRENT_FROM_COLUMN) && !"now()".equals(fromDefault)) {
            drifts.add(new Drift(Drift.Kind.COLUMN_DEFAULT_CHANGED, "the default of " + table + "."
                    + CatalogReader.CURRENT_FROM_COLUMN + " is " + fromDefault + ", not now()"));
        }
        for (CurrentInTableSql.ObsoleteCheck check : current.obsoleteChecks(c)) {
            drifts.add(new Drift(Drift.Kind.OBSOLETE_CONSTRAINT, "table " + check.table() + " has the constraint "
                    + check.name() + " that an earlier version installed and this one does not: PostgreSQL prepares"
                    + " it for every statement that writes the table, at the cost of every write"));
        }
        List<String> later = CatalogObjects.beforeRowUpdateTriggersAfter(c, table, names.statementTriggers().get(1));
        if (!later.isEmpty()) {
            drifts.add(new Drift(Drift.Kind.CONFLICTING_TRIGGER, current.laterUpdateTriggersProblem(later)));
        }
        if (viewKind.isPresent()) {
            // Compared with what was installed (the registry), so a column added since is one drift, not two.
            List<String> expected = CurrentInTableSql.viewColumns(entry.versioned(), entry.orphans());
            List<String> live = new ArrayList<>(CatalogObjects.columns(c, entry.historyTable()).keySet());
            if (!"v".equals(viewKind.get())) {
                drifts.add(new Drift(Drift.Kind.HISTORY_VIEW_CHANGED, entry.historyTable() + " is not a view"
                        + " (relkind '" + viewKind.get() + "'); it should present the versions of " + table));
            } else if (!live.equals(expected)) {
                drifts.add(new Drift(Drift.Kind.HISTORY_VIEW_CHANGED, "view " + entry.historyTable() + " has the"
                        + " columns " + live + ", not the generated " + expected));
            }
        }
        for (CurrentInTableSql.ExpectedTrigger expected : current.expectedTriggers(entry.versioned())) {
            Optional<CatalogObjects.InstalledTrigger> installed = CatalogObjects.trigger(c, table, expected.name());
            if (installed.isEmpty() || !installed.get().function().equals(expected.function().toString())) {
                continue; // reported as TRIGGER_MISSING
            }
            CatalogObjects.InstalledTrigger t = installed.get();
            List<String> problems = new ArrayList<>();
            if (t.type() != expected.type()) {
                problems.add("it fires " + CurrentInTableSql.describeTriggerType(t.type()) + ", not "
                        + CurrentInTableSql.describeTriggerType(expected.type()));
            }
            if (expected.whenColumns() == null ? t.hasWhen() : !t.hasWhen()
                    || !t.whenColumns().equals(expected.whenColumns())) {
                problems.add(expected.whenColumns() == null ? "it has a WHEN condition, which the generated one has"
                        + " not" : "its WHEN condition reads " + (t.hasWhen() ? t.whenColumns() : "nothing")
                        + ", not " + expected.whenColumns());
            }
            if (!java.util.Objects.equals(t.oldTable(), expected.oldTable())) {
                problems.add(expected.oldTable() == null ? "it has a transition table of old rows, "
                        + t.oldTable() + ", which the generated one has not" : "its transition table of old rows is "
                        + (t.oldTable() == null ? "missing" : t.oldTable()) + ", not " + expected.oldTable()
                        + " (the function reads the deleted rows from it)");
            }
            if (!problems.isEmpty()) {
                drifts.add(new Drift(Drift.Kind.TRIGGER_CHANGED, "trigger " + expected.name() + " on " + table + ": "
                        + String.join(", ", problems)));
            }
        }
    }

    /**
     * The history view is dropped without CASCADE, so a view of the application's that reads it is never dropped
     * with it; this names those views before PostgreSQL's own refusal would (whose detail a driver may not show).
     */
    private void refuseDependentViews(Connection c, PgName view, String why) throws SQLException {
        refuseDependentViews(c, object, "view " + view, view, why);
    }

    /** Refuses, naming them, views of the application that read {@code relation}, which {@code why} would drop. */
    static void refuseDependentViews(Connection c, String object, String what, PgName relation, String why)
            throws SQLException {
        List<String> dependents = CatalogObjects.dependentViews(c, relation);
        if (!dependents.isEmpty()) {
            throw TidemarkException.forObject(ErrorCode.SCHEMA_CHANGE_REFUSED, object, what + " is read by "
                    + String.join(", ", dependents) + ", and " + why + ". Tidemark does not drop views of yours: drop"
                    + " them, run this again and create them again. Nothing was changed.");
        }
    }

    /**
     * How a generated function runs: as its owner with every name qualified (the writing functions), as the caller
     * with every name qualified (the insert function of CURRENT_IN_TABLE), or as the caller with search_path pinned
     * (the as-of function, whose SQL reads the caller's tables).
     */
    private enum Rights {
        DEFINER, INVOKER, INVOKER_PINNED
    }

    private void checkFunction(Connection c, PgName function, String args, String expectedBody,
                               Rights rights, List<Drift> drifts, RegistryEntry entry) throws SQLException {
        boolean definer = rights == Rights.DEFINER;
        Optional<CatalogObjects.InstalledFunction> installed = CatalogObjects.function(c, function, args);
        if (installed.isEmpty()) {
            drifts.add(new Drift(Drift.Kind.FUNCTION_MISSING, "function " + function + "(" + args + ") is missing"));
            return;
        }
        CatalogObjects.InstalledFunction fn = installed.get();
        List<String> problems = new ArrayList<>();
        if (!fn.source().equals(expectedBody)) {
            String hash = RegistryEntry.sha256(fn.source());
            problems.add(entry != null && !hash.equals(entry.functionHash())
                    ? "its body was changed after installation (hash " + hash.substring(0, 12) + ", registered "
                    + entry.functionHash().substring(0, 12) + ")"
                    : "its body differs from what the table generates now");
        }
        if (fn.securityDefiner() != definer) {
            problems.add(definer ? "it is no longer SECURITY DEFINER" : "it became SECURITY DEFINER");
        }
        if (rights != Rights.INVOKER_PINNED && !fn.settings().isEmpty()) {
            // The trigger functions qualify every name instead of setting search_path; a SET clause added by hand
            // is harmless to security but costs every write as much as the rest of a one-row trigger.
            problems.add("it has SET " + String.join(", ", fn.settings()) + ", which the generated function does not"
                    + " (every name in it is schema-qualified; the clause only slows every write)");
        } else if (rights == Rights.INVOKER_PINNED
                && !fn.settings().contains("search_path=" + HistorySql.PINNED_SEARCH_PATH)) {
            problems.add("its search_path is not pinned to " + HistorySql.PINNED_SEARCH_PATH);
        }
        if (!problems.isEmpty()) {
            drifts.add(new Drift(Drift.Kind.FUNCTION_CHANGED, "function " + function + ": "
                    + String.join(", ", problems)));
        }
    }

    private void checkTrigger(Connection c, String trigger, PgName function, List<Drift> drifts) throws SQLException {
        Optional<CatalogObjects.InstalledTrigger> installed = CatalogObjects.trigger(c, HistoryNames.table(config), trigger);
        if (installed.isEmpty() || !installed.get().function().equals(function.toString())) {
            drifts.add(new Drift(Drift.Kind.TRIGGER_MISSING, "trigger " + trigger + " on " + HistoryNames.table(config)
                    + (installed.isEmpty() ? " is missing" : " calls " + installed.get().function())));
        } else if ("D".equals(installed.get().enabled())) {
            drifts.add(new Drift(Drift.Kind.TRIGGER_DISABLED, "trigger " + trigger + " on " + HistoryNames.table(config)
                    + " is disabled: changes are not recorded"));
        }
    }

    private static List<Column> orphans(RegistryEntry entry, TableShape shape) {
        Map<String, Column> orphans = new LinkedHashMap<>(byName(entry.orphans()));
        entry.versioned().forEach(col -> orphans.putIfAbsent(col.name(), col));
        shape.versioned().forEach(col -> orphans.remove(col.name()));
        return new ArrayList<>(orphans.values());
    }

    private static List<String> names(List<Column> columns) {
        return columns.stream().map(Column::name).toList();
    }

    private static Map<String, Column> byName(List<Column> columns) {
        Map<String, Column> map = new LinkedHashMap<>();
        columns.forEach(col -> map.put(col.name(), col));
        return map;
    }

    private static void execute(Connection c, SqlStep step, List<String> actions, String action) throws SQLException {
        Jdbc.execute(c, step.sql());
        actions.add(action);
    }
}
