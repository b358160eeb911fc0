package io.tidemark.history.internal.ddl;

import io.tidemark.history.MigrationReport;
import io.tidemark.history.TemporalTable;
import io.tidemark.history.internal.catalog.CatalogObjects;
import io.tidemark.history.internal.catalog.CatalogReader;
import io.tidemark.history.internal.catalog.Column;
import io.tidemark.history.internal.catalog.RegistryEntry;
import io.tidemark.history.internal.catalog.TableShape;
import io.tidemark.sync.ErrorCode;
import io.tidemark.sync.TidemarkException;

import java.sql.Connection;
import java.sql.SQLException;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Set;

/**
 * The way back: a history stored as CURRENT_IN_TABLE becomes one history table (HISTORY_TABLE) again. Every closed
 * version keeps its row and its {@code history_id}; each row of the table becomes its open version exactly as the
 * view presented it; the table loses its two current-version columns. Nothing needs splitting: the history table
 * shape can hold every version the other one can.
 */
final class HistoryTableMigration {

    /** The closed-versions table's own columns; any other column is a versioned column or an orphan. */
    private static final Set<String> CLOSED_COLUMNS = Set.of("history_id", "valid_from", "valid_to", "operation",
            "chain_no", "context");

    private final TemporalTable config;
    private final String object;

    HistoryTableMigration(TemporalTable config) {
        this.config = config;
        this.object = HistoryNames.table(config).toString();
    }

    /** The statements, in order; {@code copy} and {@code move} are the steps whose row counts the report gives. */
    record Plan(TableShape shape, List<SqlStep> steps, SqlStep copy, SqlStep move, boolean readers) {
    }

    /** The table's shape without the current version's two columns, which the migration drops. */
    static TableShape withoutCurrentColumns(TableShape shape) {
        Set<String> current = Set.of(CatalogReader.CURRENT_FROM_COLUMN, CatalogReader.CURRENT_CONTEXT_COLUMN);
        return new TableShape(shape.table(), shape.allColumns().stream().filter(c -> !current.contains(c.name())).toList(),
                shape.versioned().stream().filter(c -> !current.contains(c.name())).toList(), shape.keyColumns(),
                shape.generated());
    }

    Plan plan(Connection c, RegistryEntry entry, TableShape read) throws SQLException {
        TableShape shape = withoutCurrentColumns(read);
        HistorySql sql = new HistorySql(config, shape);
        HistoryNames names = HistoryNames.of(config);
        if (!entry.historyTable().equals(names.historyTable())) {
            throw TidemarkException.forObject(ErrorCode.INVALID_CONFIGURATION, object, "it is installed with history"
                    + " table " + entry.historyTable() + " but configured with " + names.historyTable()
                    + "; configure the installed name");
        }
        String schema = names.historyTable().schema().orElseThrow();
        if (!CatalogObjects.relationKind(c, schema, names.closedTable().name()).filter("r"::equals).isPresent()) {
            throw TidemarkException.forObject(ErrorCode.SCHEMA_DRIFT, object, "closed-versions table "
                    + names.closedTable() + " does not exist; there is no history to migrate. Run uninstall() and"
                    + " install() to start a new one");
        }
        for (String column : List.of(CatalogReader.CURRENT_FROM_COLUMN, CatalogReader.CURRENT_CONTEXT_COLUMN)) {
            if (read.allColumns().stream().noneMatch(col -> col.name().equals(column))) {
                throw TidemarkException.forObject(ErrorCode.SCHEMA_DRIFT, object, "the table has no column " + column
                        + ", which holds the current versions; there is no complete history to migrate. Nothing was"
                        + " changed.");
            }
        }
        Map<String, String> held = CatalogObjects.columns(c, names.closedTable());
        StorageMigration.refuseChangedTypes(object, shape, held, names.closedTable());
        SchemaMaintenance.refuseDependentViews(c, object, "view " + names.historyTable(), names.historyTable(),
                "migrate() replaces it by a table of the same name");
        List<String> attached = new ArrayList<>(StorageMigration.attachedObjects(c, names.closedTable()));
        CatalogObjects.dependentViews(c, names.closedTable()).stream()
                .filter(v -> !v.replace("\"", "").equals(schema + "." + names.historyTable().name())) // its own view
                .forEach(v -> attached.add("view " + v));
        CatalogObjects.grants(c, names.closedTable()).forEach(g -> attached.add("grant (" + g + ")"));
        if (!attached.isEmpty()) {
            throw TidemarkException.forObject(ErrorCode.SCHEMA_CHANGE_REFUSED, object, "closed-versions table "
                    + names.closedTable() + " has " + String.join(", ", attached) + ", which would go with it: the"
                    + " migration copies its rows into " + names.historyTable() + " and drops it. Drop or revoke"
                    + " them, migrate, and recreate what still applies on " + names.historyTable()
                    + ". Nothing was changed.");
        }
        for (String index : List.of(names.keyIndex(), names.openIndex(), names.chainIndex(), names.periodIndex())) {
            if (CatalogObjects.relationExists(c, schema, index)) {
                throw TidemarkException.forObject(ErrorCode.SCHEMA_UNSUPPORTED, object, "relation " + schema + "."
                        + index + " already exists; rename or drop it, then migrate. Nothing was changed.");
            }
        }
        List<String> optIns = new ArrayList<>();
        if (config.sessionUserColumn()) {
            optIns.add(CatalogReader.SESSION_USER_COLUMN);
        }
        if (config.transactionIdColumn()) {
            optIns.add(CatalogReader.TRANSACTION_ID_COLUMN);
        }
        Set<String> own = new java.util.HashSet<>(CLOSED_COLUMNS);
        own.addAll(optIns); // the target creates them, and they are filled from what the closed versions hold
        List<Column> orphans = StorageMigration.orphans(held, own, shape);
        HistoryTableMigrationSql migration = new HistoryTableMigrationSql(sql, held.keySet(), orphans, optIns);
        List<String> readers = CatalogObjects.selectGrants(c, names.historyTable());

        List<SqlStep> steps = new ArrayList<>();
        steps.add(migration.lockClosedVersions());
        steps.addAll(migration.dropCurrentInTableShape());
        steps.add(sql.createHistoryTable());
        for (Column orphan : orphans) {
            steps.add(sql.addHistoryColumn(orphan.quoted() + " " + orphan.typeDefinition()));
        }
        SqlStep copy = migration.copyClosedVersions();
        steps.add(copy);
        steps.add(migration.continueIdentity());
        SqlStep move = migration.copyCurrentVersions();
        steps.add(move);
        steps.add(migration.dropClosedVersions());
        steps.add(migration.dropCurrentColumns());
        steps.addAll(sql.createIndexes());
        steps.addAll(Installer.functionsAndTriggers(sql));
        readers.forEach(grant -> steps.add(new SqlStep("A reader of the view reads the history table.", grant)));
        steps.add(sql.register(RegistryEntry.of(config, shape, orphans, sql)));
        return new Plan(shape, steps, copy, move, !readers.isEmpty());
    }

    MigrationReport migrate(Connection c, Plan plan) throws SQLException {
        long closed = 0;
        long moved = 0;
        for (SqlStep step : plan.steps()) {
            long changed = StorageMigration.run(c, step.sql());
            if (step == plan.copy()) {
                closed = changed;
            } else if (step == plan.move()) {
                moved = changed;
            }
        }
        HistoryNames names = HistoryNames.of(config);
        return new MigrationReport(true, closed, moved, 0, List.of(
                "dropped the view, the triggers and the functions of storage CURRENT_IN_TABLE",
                "copied " + closed + " closed versions and tombstones to " + names.historyTable(),
                "copied " + moved + " current versions from the rows of " + plan.shape().table() + " as open versions"
                        + " and dropped its columns " + CatalogReader.CURRENT_FROM_COLUMN + " and "
                        + CatalogReader.CURRENT_CONTEXT_COLUMN,
                "dropped " + names.closedTable(),
                "installed the triggers and functions of storage HISTORY_TABLE and registered it"
                        + (plan.readers() ? "; the view's SELECT grants are on the history table" : "")));
    }

    static SqlStep lock(TemporalTable config) {
        return HistoryTableMigrationSql.lock(HistoryNames.table(config), HistoryNames.of(config).historyTable());
    }
}
