package io.tidemark.history.internal.ddl;

import io.tidemark.history.HistoryStorage;
import io.tidemark.history.MigrationReport;
import io.tidemark.history.TemporalTable;
import io.tidemark.history.internal.HistoryTransactions;
import io.tidemark.history.internal.catalog.CatalogObjects;
import io.tidemark.history.internal.catalog.CatalogReader;
import io.tidemark.history.internal.catalog.Column;
import io.tidemark.history.internal.catalog.Registry;
import io.tidemark.history.internal.catalog.RegistryEntry;
import io.tidemark.history.internal.catalog.TableShape;
import io.tidemark.sync.ErrorCode;
import io.tidemark.sync.TidemarkException;
import io.tidemark.sync.internal.jdbc.Jdbc;
import io.tidemark.sync.internal.sql.PgName;

import javax.sql.DataSource;
import java.sql.Connection;
import java.sql.SQLException;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;

/**
 * Converts an installed history between the storage shapes, in one transaction under locks that keep readers and
 * writers out: to {@link HistoryStorage#CURRENT_IN_TABLE} here (every closed version keeps its row and its
 * {@code history_id}, every open version moves into its row of the table, the history table's name becomes the view
 * that presents both), and back to {@link HistoryStorage#HISTORY_TABLE} in {@link HistoryTableMigration}. Nothing is
 * dropped before its rows are copied, and any refusal leaves everything as it was.
 */
public final class StorageMigration {

    /** The history table's own columns; any other column is a versioned column or an orphan. */
    private static final Set<String> HISTORY_COLUMNS = Set.of("history_id", "valid_from", "valid_to", "operation",
            "chain_no", "changed_by", "changed_by_name", "correlation_id", "reason", "extra");

    private final TemporalTable config;
    private final String object;

    public StorageMigration(TemporalTable config) {
        this.config = config;
        this.object = HistoryNames.table(config).toString();
    }

    public MigrationReport migrate(DataSource dataSource) {
        return HistoryTransactions.inSchemaTransaction(dataSource, object, "migrating history", c -> {
            CatalogReader.pinSearchPath(c);
            if (installed(c).storage() == config.storage()) {
                return new MigrationReport(false, 0, 0, 0, List.of());
            }
            CatalogReader.read(c, config); // explanatory errors before the lock
            boolean toCurrent = config.storage() == HistoryStorage.CURRENT_IN_TABLE;
            Jdbc.execute(c, lock(toCurrent).sql());
            // Read again under the lock: another migrate() may have finished while this one waited.
            RegistryEntry entry = installed(c);
            if (entry.storage() == config.storage()) {
                return new MigrationReport(false, 0, 0, 0, List.of());
            }
            if (!toCurrent) {
                HistoryTableMigration back = new HistoryTableMigration(config);
                return back.migrate(c, back.plan(c, entry, CatalogReader.read(c, config)));
            }
            return migrateLocked(c, entry, CatalogReader.read(c, config));
        });
    }

    private SqlStep lock(boolean toCurrent) {
        return toCurrent ? MigrationSql.lock(HistoryNames.table(config), HistoryNames.of(config).historyTable())
                : HistoryTableMigration.lock(config);
    }

    /** The whole migration as SQL, formatted and commented for review, to run as one transaction. */
    public String script(DataSource dataSource) {
        return HistoryTransactions.readOnly(dataSource, object, "reading the table for the migration script", c -> {
            CatalogReader.pinSearchPath(c);
            RegistryEntry entry = installed(c);
            if (entry.storage() == config.storage()) {
                throw TidemarkException.forObject(ErrorCode.INVALID_CONFIGURATION, object, "history is stored as "
                        + config.storage() + " already; there is nothing to migrate");
            }
            boolean toCurrent = config.storage() == HistoryStorage.CURRENT_IN_TABLE;
            TableShape shape = CatalogReader.read(c, config);
            List<SqlStep> steps = new ArrayList<>();
            steps.add(MigrationSql.requireReadCommitted(object));
            steps.add(lock(toCurrent));
            if (toCurrent) {
                Plan plan = plan(c, entry, shape);
                steps.add(plan.sql().consistencyCheckBlock(object));
                steps.addAll(plan.steps());
            } else {
                steps.addAll(new HistoryTableMigration(config).plan(c, entry, shape).steps());
            }
            StringBuilder out = new StringBuilder();
            out.append("-- Tidemark: migrate the history of ").append(shape.table()).append(" from storage ")
                    .append(entry.storage()).append(" to ").append(config.storage()).append('\n')
                    .append("--\n")
                    .append("-- Run as ONE transaction at READ COMMITTED (Flyway and Liquibase do; with psql use\n")
                    .append("-- --single-transaction), as the role that owns the table. Readers and writers of the table\n")
                    .append("-- and its history wait for the lock until it commits.").append(toCurrent
                            ? " Every row of the table is updated\n-- once." : "\n--")
                    .append(" Generated from the catalog as it is now: generate it again after a schema change.\n")
                    .append("-- TemporalTable.migrate() runs the same statements.\n\n");
            for (SqlStep step : steps) {
                out.append(step.render()).append('\n');
            }
            return out.toString();
        });
    }

    private RegistryEntry installed(Connection c) throws SQLException {
        Optional<RegistryEntry> entry = Registry.exists(c) ? Registry.find(c, HistoryNames.table(config))
                : Optional.empty();
        return entry.orElseThrow(() -> TidemarkException.forObject(ErrorCode.SCHEMA_DRIFT, object,
                HistoryNames.table(config) + " is not registered as a temporal table; there is nothing to migrate."
                        + " Run install()"));
    }

    private MigrationReport migrateLocked(Connection c, RegistryEntry entry, TableShape shape) throws SQLException {
        Plan plan = plan(c, entry, shape);
        refuseInconsistentHistory(c, plan.sql());
        long closed = 0;
        long split = 0;
        long moved = 0;
        for (SqlStep step : plan.steps()) {
            long changed = run(c, step.sql());
            if (step == plan.copy()) {
                closed = changed;
            } else if (step == plan.split()) {
                split = changed;
            } else if (step == plan.move()) {
                moved = changed;
            }
        }
        long rows = Jdbc.query(c, plan.sql().countRows(), rs -> rs.getLong(1)).get(0);
        if (moved != rows) {
            throw TidemarkException.forObject(ErrorCode.SCHEMA_DRIFT, object, moved + " open versions matched the "
                    + rows + " rows of the table; nothing was changed. Run checkInvariants() on the installed history");
        }
        HistoryNames names = HistoryNames.of(config);
        List<String> actions = new ArrayList<>();
        actions.add("dropped the triggers and functions of storage HISTORY_TABLE");
        actions.add("copied " + closed + " closed versions and tombstones to " + names.closedTable());
        if (split > 0) {
            actions.add("closed " + split + " open versions at the migration instant, each continued by an identical"
                    + " current version (their earlier versions were pruned, or they held values in columns no longer"
                    + " versioned)");
        }
        actions.add("moved " + moved + " open versions into the rows of " + shape.table()
                + (plan.paused().isEmpty() ? "" : " (triggers " + String.join(", ", plan.paused().stream()
                .map(UserTrigger::name).toList()) + " paused for it)"));
        actions.add("created view " + names.historyTable() + (plan.readers() ? " with the history table's SELECT"
                + " grants" : ""));
        actions.add("installed the triggers and functions of storage CURRENT_IN_TABLE and registered it");
        return new MigrationReport(true, closed, moved, split, actions);
    }

    /** Runs one step (some are several statements, one a SELECT) and returns its first row count, 0 when none. */
    static long run(Connection c, String sql) throws SQLException {
        try (java.sql.Statement s = c.createStatement()) {
            s.execute(sql);
            return Math.max(0, s.getUpdateCount());
        }
    }

    /**
     * The migration's statements, in order; {@code copy}, {@code split} and {@code move} are the steps whose row
     * counts the report gives.
     */
    record Plan(TableShape shape, MigrationSql sql, List<SqlStep> steps, SqlStep copy, SqlStep split, SqlStep move,
                List<UserTrigger> paused, boolean readers) {
    }

    /** Reads what the migration depends on, refuses what it cannot migrate, and lays out the statements. */
    private Plan plan(Connection c, RegistryEntry entry, TableShape shape) throws SQLException {
        HistorySql sql = new HistorySql(config, shape);
        CurrentInTableSql current = sql.current();
        HistoryNames names = HistoryNames.of(config);
        PgName history = entry.historyTable();
        if (!history.equals(names.historyTable())) {
            throw TidemarkException.forObject(ErrorCode.INVALID_CONFIGURATION, object, "it is installed with history"
                    + " table " + history + " but configured with " + names.historyTable()
                    + "; configure the installed name");
        }
        String schema = history.schema().orElseThrow();
        if (!CatalogObjects.relationKind(c, schema, history.name()).filter("r"::equals).isPresent()) {
            throw TidemarkException.forObject(ErrorCode.SCHEMA_DRIFT, object, "history table " + history + " does not"
                    + " exist; there is no history to migrate. Run uninstall() and install() to start a new one");
        }
        Map<String, String> held = CatalogObjects.columns(c, history);
        List<Column> orphans = orphans(held, HISTORY_COLUMNS, shape);
        refuseUnmigratable(c, sql, shape, held, names);
        MigrationSql migration = new MigrationSql(sql, history, held.keySet(), orphans);
        List<String> readers = CatalogObjects.selectGrants(c, history);
        List<UserTrigger> paused = UserTrigger.onUpdate(c, HistoryNames.table(config)).stream()
                .filter(t -> !names.generatedTriggers().contains(t.name())).toList(); // those are dropped

        List<SqlStep> steps = new ArrayList<>(migration.dropHistoryTableShape());
        steps.add(current.createClosedTable());
        for (Column orphan : orphans) {
            steps.add(current.addClosedColumn(orphan.quoted() + " " + orphan.typeDefinition()));
        }
        SqlStep copy = migration.copyClosedVersions();
        steps.add(copy);
        steps.add(migration.continueIdentity());
        // Indexed once the rows are in (faster than row by row); the look-ups below read the key index.
        steps.addAll(current.createIndexes());
        steps.add(migration.analyzeClosedVersions());
        steps.add(current.addCurrentColumns());
        paused.forEach(t -> steps.add(t.disable()));
        SqlStep split = migration.splitPrunedVersions();
        steps.add(split);
        SqlStep move = migration.moveOpenVersions();
        steps.add(move);
        paused.forEach(t -> steps.add(t.restore()));
        steps.add(migration.dropHistoryTable());
        steps.add(current.createView(orphans));
        readers.forEach(grant -> steps.add(new SqlStep("A reader of the history table reads the view.", grant)));
        steps.addAll(Installer.functionsAndTriggers(sql));
        steps.add(sql.register(RegistryEntry.of(config, shape, orphans, sql)));
        return new Plan(shape, migration, steps, copy, split, move, paused, !readers.isEmpty());
    }

    /**
     * Columns of the table being migrated from ({@code held}) that are neither its own ({@code own}) nor versioned now:
     * dropped or excluded columns, and opt-in columns the target does not create. They move along as orphans, as
     * they stay on evolve.
     */
    static List<Column> orphans(Map<String, String> held, Set<String> own, TableShape shape) {
        List<Column> orphans = new ArrayList<>();
        held.forEach((name, type) -> {
            if (!own.contains(name) && !shape.isVersioned(name)) {
                orphans.add(new Column(name, type, null, false));
            }
        });
        return orphans;
    }

    private void refuseUnmigratable(Connection c, HistorySql sql, TableShape shape, Map<String, String> held,
                                    HistoryNames names) throws SQLException {
        refuseChangedTypes(object, shape, held, names.historyTable());
        for (String column : HISTORY_COLUMNS) {
            if (!held.containsKey(column)) {
                throw TidemarkException.forObject(ErrorCode.SCHEMA_DRIFT, object, names.historyTable() + " has no"
                        + " column " + column + "; it is not a history table Tidemark can migrate. Nothing was changed.");
            }
        }
        for (String index : List.of(names.closedKeyIndex(), names.closedChainIndex(), names.closedPeriodIndex())) {
            if (CatalogObjects.relationExists(c, names.historyTable().schema().orElseThrow(), index)) {
                throw TidemarkException.forObject(ErrorCode.SCHEMA_UNSUPPORTED, object, "relation "
                        + names.historyTable().schema().orElseThrow() + "." + index + " already exists (an index of a"
                        + " renamed table keeps its name); rename or drop it, then migrate. Nothing was changed.");
            }
        }
        List<String> attached = attachedObjects(c, names.historyTable());
        if (!attached.isEmpty()) {
            throw TidemarkException.forObject(ErrorCode.SCHEMA_CHANGE_REFUSED, object, "history table "
                    + names.historyTable() + " has " + String.join(", ", attached) + ", which would go with it: the"
                    + " migration replaces the table by a view. Drop them, migrate, and recreate what still applies"
                    + " (on the view, or on " + names.closedTable() + "). Nothing was changed.");
        }
        SchemaMaintenance.refuseDependentViews(c, object, "history table " + names.historyTable(),
                names.historyTable(), "migrate() replaces it by a view of the same name");
        String schema = names.historyTable().schema().orElseThrow();
        if (CatalogObjects.relationExists(c, schema, names.closedTable().name())) {
            throw TidemarkException.forObject(ErrorCode.SCHEMA_UNSUPPORTED, object, names.closedTable() + " already"
                    + " exists; rename or drop it, then migrate. Nothing was changed.");
        }
        if (CatalogObjects.anyFunction(c, names.insertFunction())) {
            throw TidemarkException.forObject(ErrorCode.SCHEMA_UNSUPPORTED, object, "function "
                    + names.insertFunction() + " already exists and was not generated for this table; drop or rename"
                    + " it, then migrate. Nothing was changed.");
        }
        for (String column : List.of(CatalogReader.CURRENT_FROM_COLUMN, CatalogReader.CURRENT_CONTEXT_COLUMN)) {
            if (shape.allColumns().stream().anyMatch(col -> col.name().equals(column))) {
                throw TidemarkException.forObject(ErrorCode.SCHEMA_UNSUPPORTED, object, "the table already has a"
                        + " column " + column + ", which HistoryStorage.CURRENT_IN_TABLE adds to keep the current"
                        + " version; rename it, then migrate. Nothing was changed.");
            }
        }
        List<String> later = CatalogObjects.beforeRowUpdateTriggersAfter(c, HistoryNames.table(config),
                names.statementTriggers().get(1));
        if (!later.isEmpty()) {
            throw TidemarkException.forObject(ErrorCode.SCHEMA_UNSUPPORTED, object,
                    sql.current().laterUpdateTriggersProblem(later) + ". Nothing was changed.");
        }
    }

    /** A versioned column whose type differs from the one history holds it in: evolve() reports and refuses it. */
    static void refuseChangedTypes(String object, TableShape shape, Map<String, String> held, PgName history) {
        for (Column column : shape.versioned()) {
            String type = held.get(column.name());
            if (type != null && !type.equals(column.typeDefinition())) {
                throw TidemarkException.forObject(ErrorCode.SCHEMA_CHANGE_REFUSED, object, "column " + column.name()
                        + " is " + column.typeDefinition() + " in the table but " + type + " in " + history
                        + "; run evolve() with the installed storage first (it reports the change). Nothing was"
                        + " changed.");
            }
        }
    }

    /**
     * What hangs on a table the migration drops and would go with it: foreign keys that reference it, triggers and
     * row security policies on it.
     */
    static List<String> attachedObjects(Connection c, PgName table) throws SQLException {
        return Jdbc.query(c, """
                SELECT 'foreign key ' || pg_catalog.quote_ident(k.conname) || ' of '
                       || k.conrelid::pg_catalog.regclass::pg_catalog.text
                FROM pg_catalog.pg_constraint k
                WHERE k.confrelid = ?::pg_catalog.regclass AND k.contype = 'f'
                UNION ALL
                SELECT 'trigger ' || pg_catalog.quote_ident(t.tgname)
                FROM pg_catalog.pg_trigger t
                WHERE t.tgrelid = ?::pg_catalog.regclass AND NOT t.tgisinternal
                UNION ALL
                SELECT 'row security policy ' || pg_catalog.quote_ident(p.polname)
                FROM pg_catalog.pg_policy p
                WHERE p.polrelid = ?::pg_catalog.regclass
                ORDER BY 1""", rs -> rs.getString(1), table.quoted(), table.quoted(), table.quoted());
    }

    /**
     * The current-in-table shape has one current version per row and no other open version; a history whose open
     * versions and rows do not pair up (triggers disabled for a while, rows changed by hand) is refused, naming a key.
     */
    private void refuseInconsistentHistory(Connection c, MigrationSql steps) throws SQLException {
        for (MigrationSql.Check check : steps.consistencyChecks()) {
            List<String> found = Jdbc.query(c, check.sql(), rs -> rs.getLong(1) == 0 ? null
                    : rs.getLong(1) + " (key " + rs.getString(2) + ")");
            if (found.get(0) != null) {
                throw TidemarkException.forObject(ErrorCode.SCHEMA_DRIFT, object, check.problem() + ": "
                        + found.get(0) + ". Run checkInvariants() with the installed storage and repair the history"
                        + " first. Nothing was changed.");
            }
        }
    }

    /** An application trigger that fires on UPDATE, paused while the open versions move into the rows. */
    record UserTrigger(PgName table, String name, String enabled) {

        static List<UserTrigger> onUpdate(Connection c, PgName table) throws SQLException {
            return Jdbc.query(c, """
                    SELECT t.tgname, t.tgenabled::text
                    FROM pg_catalog.pg_trigger t
                    WHERE t.tgrelid = ?::pg_catalog.regclass AND NOT t.tgisinternal
                      AND t.tgenabled IN ('O', 'A') AND (t.tgtype::integer & 16) <> 0
                    ORDER BY t.tgname""", rs -> new UserTrigger(table, rs.getString(1), rs.getString(2)),
                    table.quoted());
        }

        SqlStep disable() {
            return new SqlStep("The application's trigger " + name + " does not see the row stamping below.",
                    "ALTER TABLE " + table.quoted() + " DISABLE TRIGGER " + PgName.quote(name));
        }

        SqlStep restore() {
            return new SqlStep("The application's trigger " + name + " as it was.",
                    "ALTER TABLE " + table.quoted() + " ENABLE " + ("A".equals(enabled) ? "ALWAYS " : "")
                            + "TRIGGER " + PgName.quote(name));
        }
    }
}
