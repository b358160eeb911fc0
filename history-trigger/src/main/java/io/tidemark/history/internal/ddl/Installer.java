package io.tidemark.history.internal.ddl;

import io.tidemark.history.InstallProgress;
import io.tidemark.history.InstallReport;
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
import io.tidemark.sync.internal.PostgresVersions;
import io.tidemark.sync.internal.jdbc.Jdbc;

import javax.sql.DataSource;
import java.sql.Connection;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;

/** Installs a temporal table, or renders the installation as a script. */
public final class Installer {

    private final TemporalTable config;
    private final String object;

    public Installer(TemporalTable config) {
        this.config = config;
        this.object = HistoryNames.table(config).toString();
    }

    /** The whole installation, for review and for migration tools. */
    public String script(DataSource dataSource) {
        TableShape shape = HistoryTransactions.readOnly(dataSource, object, "reading the table for the history script", c -> {
            CatalogReader.pinSearchPath(c);
            return CatalogReader.read(c, config);
        });
        return render(shape);
    }

    /** Renders the script for a known shape (also used by the golden-file tests). */
    public String render(TableShape shape) {
        HistorySql sql = new HistorySql(config, shape);
        StringBuilder out = new StringBuilder();
        out.append("-- Tidemark temporal history for ").append(shape.table()).append('\n')
                .append("--\n")
                .append("-- History table: ").append(HistoryNames.history(config)).append('\n')
                .append("-- Versioned columns: ").append(names(shape.versioned())).append('\n')
                .append("-- Primary key: ").append(names(shape.keyColumns())).append('\n')
                .append("-- Excluded columns: ").append(config.excludedColumns().isEmpty() ? "none"
                        : String.join(", ", config.excludedColumns())).append('\n')
                .append("-- Change context settings: ").append(config.settingsPrefix()).append(".changed_by, .changed_by_name,")
                .append(" .correlation_id, .reason, .extra\n")
                .append("--\n")
                .append("-- Run as ONE transaction (Flyway and Liquibase do; with psql use --single-transaction),\n")
                .append("-- as the role that owns the table and has CREATE on its schema. No superuser is needed.\n")
                .append("-- Generated: do not edit. TemporalTable.verify() reports any difference as drift.\n\n");
        List<SqlStep> steps = new ArrayList<>(HistorySql.createRegistry());
        steps.add(sql.lockTable());
        steps.addAll(installSteps(sql));
        steps.add(sql.register(RegistryEntry.of(config, shape, List.of(), sql)));
        for (SqlStep step : steps) {
            out.append(step.render()).append('\n');
        }
        return out.toString();
    }

    /** Rows per seed batch when progress is reported: about a second's work each, few enough statements. */
    static final int SEED_BATCH_ROWS = 20_000;

    public InstallReport install(DataSource dataSource) {
        return install(dataSource, null, SEED_BATCH_ROWS);
    }

    /** Installs, seeding in batches reported to {@code progress}. */
    public InstallReport install(DataSource dataSource, InstallProgress progress) {
        return install(dataSource, progress, SEED_BATCH_ROWS);
    }

    /**
     * @param progress  null for the single-statement seed of {@link #script}; else batches of {@code batchRows}
     */
    InstallReport install(DataSource dataSource, InstallProgress progress, int batchRows) {
        return HistoryTransactions.inSchemaTransaction(dataSource, object, "installing history", c -> {
            PostgresVersions.requireSupported(c, object, "history");
            CatalogReader.pinSearchPath(c);
            ensureRegistry(c);
            if (CatalogReader.tableOid(c, HistoryNames.table(config)).isEmpty()) {
                CatalogReader.read(c, config); // throws the explanatory error
            }
            Jdbc.execute(c, new HistorySql(config, null).lockTable().sql());
            TableShape shape = CatalogReader.read(c, config);
            Optional<RegistryEntry> existing = Registry.find(c, HistoryNames.table(config));
            if (existing.isPresent() && existing.get().storage() != config.storage()) {
                throw SchemaMaintenance.storageChanged(object, existing.get(), config);
            }
            if (existing.isPresent()) {
                List<String> repairs = new SchemaMaintenance(config).evolveLocked(c, existing.get(), shape).actions();
                return new InstallReport(false, 0, repairs);
            }
            refuseCollisions(c);
            HistorySql sql = new HistorySql(config, shape);
            if (sql.current() != null) {
                List<String> later = CatalogObjects.beforeRowUpdateTriggersAfter(c, HistoryNames.table(config),
                        HistoryNames.of(config).statementTriggers().get(1));
                if (!later.isEmpty()) {
                    throw TidemarkException.forObject(ErrorCode.SCHEMA_UNSUPPORTED, object,
                            sql.current().laterUpdateTriggersProblem(later) + ". Nothing was installed.");
                }
                return installCurrentInTable(c, sql, progress);
            }
            SqlStep seed = sql.seed();
            long seeded = 0;
            for (SqlStep step : installSteps(sql)) {
                if (step.equals(seed) && progress != null) {
                    seeded = new SeedBatches(sql, progress, batchRows).run(c);
                    continue;
                }
                try (Statement s = c.createStatement()) {
                    s.execute(step.sql());
                    if (step.equals(seed)) {
                        seeded = s.getUpdateCount();
                    }
                }
            }
            Jdbc.execute(c, sql.register(RegistryEntry.of(config, shape, List.of(), sql)).sql());
            return new InstallReport(true, seeded, List.of());
        });
    }

    /**
     * With the current version in the table there is nothing to seed: every existing row is its own open version
     * once the table has its two columns. Progress hears the row count at once.
     */
    private InstallReport installCurrentInTable(Connection c, HistorySql sql, InstallProgress progress)
            throws SQLException {
        long rows = Jdbc.query(c, sql.countRows(), rs -> rs.getLong(1)).get(0);
        if (progress != null) {
            progress.seeded(0, rows);
        }
        for (SqlStep step : installSteps(sql)) {
            Jdbc.execute(c, step.sql());
        }
        if (progress != null && rows > 0) {
            progress.seeded(rows, rows);
        }
        Jdbc.execute(c, sql.register(RegistryEntry.of(config, sql.shape, List.of(), sql)).sql());
        return new InstallReport(true, rows, List.of());
    }

    /** Creation, seed, indexes (after the seed: faster on a big table), functions, triggers, as-of. */
    static List<SqlStep> installSteps(HistorySql sql) {
        CurrentInTableSql current = sql.current();
        if (current != null) {
            List<SqlStep> steps = new ArrayList<>();
            steps.add(current.addCurrentColumns());
            sql.config.seedValidFromColumn().ifPresent(column -> steps.add(current.seedFrom(column)));
            steps.add(current.createClosedTable());
            steps.addAll(current.createIndexes());
            steps.add(current.createView());
            steps.addAll(functionsAndTriggers(sql));
            return steps;
        }
        List<SqlStep> steps = new ArrayList<>();
        steps.add(sql.createHistoryTable());
        steps.add(sql.seed());
        steps.addAll(sql.createIndexes());
        steps.addAll(functionsAndTriggers(sql));
        return steps;
    }

    /** Everything that is replaced as a whole when the table evolves. Idempotent. */
    static List<SqlStep> functionsAndTriggers(HistorySql sql) {
        List<SqlStep> steps = new ArrayList<>();
        steps.add(sql.writeFunction());
        steps.add(sql.revokeWriteFunction());
        steps.add(sql.truncateFunction());
        steps.add(sql.revokeTruncateFunction());
        if (sql.current() != null) {
            steps.addAll(sql.current().insertFunction());
        }
        steps.addAll(sql.writeTriggers());
        steps.add(sql.truncateTrigger());
        steps.add(sql.asOfFunction());
        return steps;
    }

    private void ensureRegistry(Connection c) throws SQLException {
        if (Registry.exists(c)) {
            return;
        }
        Registry.lockForCreate(c);
        for (SqlStep step : HistorySql.createRegistry()) {
            Jdbc.execute(c, step.sql());
        }
    }

    private void refuseCollisions(Connection c) throws SQLException {
        HistoryNames names = HistoryNames.of(config);
        Optional<RegistryEntry> owner = Registry.findByHistory(c, names.historyTable());
        if (owner.isPresent()) {
            throw TidemarkException.forObject(ErrorCode.INVALID_CONFIGURATION, object, "history table "
                    + names.historyTable() + " already records " + owner.get().table()
                    + "; choose another name with TemporalTable.Builder.historyTable(...)");
        }
        String historySchema = names.historyTable().schema().orElseThrow();
        if (CatalogObjects.relationExists(c, historySchema, names.historyTable().name())) {
            throw TidemarkException.forObject(ErrorCode.SCHEMA_UNSUPPORTED, object, names.historyTable()
                    + " already exists and is not a registered history table (left by an earlier uninstall, or"
                    + " someone else's table). Rename or drop it, or choose another name with historyTable(...)");
        }
        List<io.tidemark.sync.internal.sql.PgName> functions = new ArrayList<>(List.of(names.writeFunction(),
                names.truncateFunction(), names.asOfFunction()));
        if (config.storage() == io.tidemark.history.HistoryStorage.CURRENT_IN_TABLE) {
            functions.add(names.insertFunction());
        }
        for (io.tidemark.sync.internal.sql.PgName fn : functions) {
            if (CatalogObjects.anyFunction(c, fn)) {
                throw TidemarkException.forObject(ErrorCode.SCHEMA_UNSUPPORTED, object, "function " + fn
                        + " already exists and was not generated for this table; Tidemark will not replace it."
                        + " Drop or rename it, or choose another history table name");
            }
        }
        if (config.storage() == io.tidemark.history.HistoryStorage.CURRENT_IN_TABLE) {
            if (CatalogObjects.relationExists(c, historySchema, names.closedTable().name())) {
                throw TidemarkException.forObject(ErrorCode.SCHEMA_UNSUPPORTED, object, names.closedTable()
                        + " already exists and is not a registered history table. Rename or drop it, or choose"
                        + " another name with historyTable(...)");
            }
            Map<String, String> columns = CatalogObjects.columns(c, HistoryNames.table(config));
            for (String column : List.of(CatalogReader.CURRENT_FROM_COLUMN, CatalogReader.CURRENT_CONTEXT_COLUMN)) {
                if (columns.containsKey(column)) {
                    throw TidemarkException.forObject(ErrorCode.SCHEMA_UNSUPPORTED, object, "the table already has a"
                            + " column " + column + ", which HistoryStorage.CURRENT_IN_TABLE adds to keep the current"
                            + " version; rename it, or use HistoryStorage.HISTORY_TABLE");
                }
            }
        }
        for (String index : List.of(names.keyIndex(), names.openIndex(), names.chainIndex(), names.periodIndex(),
                names.closedKeyIndex(), names.closedChainIndex(), names.closedPeriodIndex())) {
            if (CatalogObjects.relationExists(c, historySchema, index)) {
                throw TidemarkException.forObject(ErrorCode.SCHEMA_UNSUPPORTED, object, "relation " + historySchema
                        + "." + index + " already exists; choose another history table name");
            }
        }
    }

    private static String names(List<Column> columns) {
        return String.join(", ", columns.stream().map(Column::name).toList());
    }
}
