package io.tidemark.cli.internal;

import io.tidemark.history.HistoryStorage;
import io.tidemark.history.InstallReport;
import io.tidemark.history.MigrationReport;
import io.tidemark.history.PruneReport;
import io.tidemark.history.TemporalTable;
import io.tidemark.history.TriggerMode;
import io.tidemark.history.TruncatePolicy;
import io.tidemark.history.VerifyReport;
import picocli.CommandLine.Command;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.ParameterException;
import picocli.CommandLine.Spec;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Option;
import picocli.CommandLine.Parameters;

import javax.sql.DataSource;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.concurrent.Callable;

/** {@code tidemark history ...}: temporal history of a PostgreSQL table ({@link TemporalTable}). */
@Command(name = "history", mixinStandardHelpOptions = true,
        description = "Temporal history of a PostgreSQL table: script, install, verify, evolve, migrate, uninstall, prune.",
        subcommands = {HistoryCommand.Script.class, HistoryCommand.Install.class, HistoryCommand.Verify.class,
                HistoryCommand.Evolve.class, HistoryCommand.Migrate.class, HistoryCommand.Uninstall.class,
                HistoryCommand.Prune.class})
public final class HistoryCommand extends ParentCommand {

    /**
     * The options of {@link TemporalTable.Builder}, one for one. verify and evolve compare with what these options
     * generate: give them the options the table was installed with.
     */
    static final class Options {
        @Parameters(index = "0", paramLabel = "TABLE", description = "The table, schema.name (schema public if none).")
        String table;

        @Option(names = "--history-table", paramLabel = "NAME", description = "Default <table>_history.")
        String historyTable;

        @Option(names = "--exclude", split = ",", paramLabel = "COLUMN", description = "Columns kept out of history.")
        List<String> exclude;

        @Option(names = "--session-user-column", description = "Add db_session_user (the login that made the change).")
        boolean sessionUserColumn;

        @Option(names = "--transaction-id-column", description = "Add transaction_id (the writing transaction).")
        boolean transactionIdColumn;

        @Option(names = "--settings-prefix", paramLabel = "PREFIX", description = "Default tidemark.")
        String settingsPrefix;

        @Option(names = "--truncate-policy", paramLabel = "POLICY",
                description = "${COMPLETION-CANDIDATES}; default CLOSE_VERSIONS.")
        TruncatePolicy truncatePolicy;

        @Option(names = "--trigger-mode", paramLabel = "MODE", description = "${COMPLETION-CANDIDATES}; default ROW.")
        TriggerMode triggerMode;

        @Option(names = "--period-index", description = "Create the GiST index for whole-table as-of queries.")
        boolean periodIndex;

        @Option(names = "--storage", paramLabel = "SHAPE",
                description = "${COMPLETION-CANDIDATES}; default HISTORY_TABLE. CURRENT_IN_TABLE keeps the current"
                        + " version in the table (two columns) and only superseded versions in <history>_closed.")
        HistoryStorage storage;

        @Option(names = "--seed-valid-from", paramLabel = "COLUMN",
                description = "Date each existing row's first version from this column instead of the install time.")
        String seedValidFrom;

        @Option(names = "--retention", paramLabel = "DURATION", converter = DurationConverter.class,
                description = "How long prune keeps closed versions: 90s, 30m, 12h, 365d or ISO-8601 (P365D).")
        Duration retention;

        @Option(names = "--prune-batch-size", paramLabel = "ROWS", description = "Rows per prune transaction.")
        Integer pruneBatchSize;

        TemporalTable build() {
            TemporalTable.Builder b = TemporalTable.forTable(table);
            if (historyTable != null) {
                b.historyTable(historyTable);
            }
            if (exclude != null) {
                b.exclude(exclude.toArray(String[]::new));
            }
            b.sessionUserColumn(sessionUserColumn).transactionIdColumn(transactionIdColumn).periodIndex(periodIndex);
            if (settingsPrefix != null) {
                b.settingsPrefix(settingsPrefix);
            }
            if (truncatePolicy != null) {
                b.truncatePolicy(truncatePolicy);
            }
            if (triggerMode != null) {
                b.triggerMode(triggerMode);
            }
            if (storage != null) {
                b.storage(storage);
            }
            if (seedValidFrom != null) {
                b.seedValidFrom(seedValidFrom);
            }
            if (retention != null) {
                b.retention(retention);
            }
            if (pruneBatchSize != null) {
                b.pruneBatchSize(pruneBatchSize);
            }
            return b.build();
        }
    }

    @Command(name = "script", mixinStandardHelpOptions = true,
            description = "Prints the installation as TemporalTable.script() generates it (reads the table's columns).")
    static final class Script implements Callable<Integer> {
        @Mixin Options options;
        @Mixin ConnectionOptions connection;
        @Mixin MigrationOptions migration;

        @Override
        public Integer call() {
            TemporalTable table = options.build();
            String script = table.script(connection.connectPostgres());
            migration.emit(script, "tidemark_history_" + table.table(), MigrationFiles.Dialect.POSTGRES);
            return 0;
        }
    }

    @Command(name = "install", mixinStandardHelpOptions = true, description = {
            "Installs history in one transaction and shows the seed's progress.",
            "Every existing row gets an open version. On an installed table, repairs drift as evolve does."})
    static final class Install implements Callable<Integer> {
        @Mixin Options options;
        @Mixin ConnectionOptions connection;

        @Override
        public Integer call() {
            TemporalTable table = options.build();
            DataSource dataSource = connection.connectPostgres();
            InstallReport report = table.install(dataSource, new SeedProgress(table.table().toString()));
            if (report.created()) {
                Output.println("history of " + table.table() + " installed: " + report.seededRows()
                        + " rows seeded into " + table.historyTable());
            } else if (report.repairs().isEmpty()) {
                Output.println("history of " + table.table() + " is installed already; nothing to repair");
            } else {
                Output.println("history of " + table.table() + " was installed already; repaired:");
                report.repairs().forEach(r -> Output.println("  " + r));
            }
            return 0;
        }
    }

    @Command(name = "verify", mixinStandardHelpOptions = true,
            description = "Reports drift between what is installed and what these options generate; exit 1 if any.")
    static final class Verify implements Callable<Integer> {
        @Mixin Options options;
        @Mixin ConnectionOptions connection;

        @Override
        public Integer call() {
            TemporalTable table = options.build();
            VerifyReport report = table.verify(connection.connectPostgres());
            if (report.isClean()) {
                Output.println("history of " + table.table() + ": no drift");
                return 0;
            }
            report.drifts().forEach(d -> Output.println(d.toString()));
            throw new Finding("history of " + table.table() + ": " + report.drifts().size() + " drift"
                    + (report.drifts().size() == 1 ? "" : "s") + " (tidemark history evolve repairs it)");
        }
    }

    @Command(name = "evolve", mixinStandardHelpOptions = true,
            description = "Repairs drift: new columns join history, missing objects are re-created.")
    static final class Evolve implements Callable<Integer> {
        @Mixin Options options;
        @Mixin ConnectionOptions connection;

        @Override
        public Integer call() {
            TemporalTable table = options.build();
            VerifyReport report = table.evolve(connection.connectPostgres());
            if (report.actions().isEmpty()) {
                Output.println("history of " + table.table() + ": nothing to repair");
            } else {
                report.actions().forEach(a -> Output.println(a));
            }
            return 0;
        }
    }

    @Command(name = "migrate", mixinStandardHelpOptions = true, description = {
            "Converts an installed history to the --storage given (required), in one transaction that keeps every"
                    + " version.",
            "Readers and writers of the table wait until it commits. With --script, prints (or writes as a migration"
                    + " file) the same statements instead, as TemporalTable.migrationScript() generates them."})
    static final class Migrate implements Callable<Integer> {
        @Mixin Options options;
        @Mixin ConnectionOptions connection;
        @Mixin MigrationOptions migration;

        @Option(names = "--script", description = "Print the migration as SQL instead of running it.")
        boolean script;

        @Spec
        CommandSpec spec;

        @Override
        public Integer call() {
            if (options.storage == null) {
                // The builder's default would silently mean "back to HISTORY_TABLE": the target is said, not implied.
                throw new ParameterException(spec.commandLine(), "Missing option --storage: the storage to migrate to"
                        + " (HISTORY_TABLE or CURRENT_IN_TABLE)");
            }
            TemporalTable table = options.build();
            if (script) {
                migration.emit(table.migrationScript(connection.connectPostgres()),
                        "tidemark_history_migrate_" + table.table(), MigrationFiles.Dialect.POSTGRES);
                return 0;
            }
            MigrationReport report = table.migrate(connection.connectPostgres());
            if (!report.migrated()) {
                Output.println("history of " + table.table() + " is stored as " + table.storage()
                        + " already; nothing to migrate");
            } else {
                Output.println("history of " + table.table() + " migrated to " + table.storage() + ":");
                report.actions().forEach(a -> Output.println("  " + a));
            }
            return 0;
        }
    }

    @Command(name = "uninstall", mixinStandardHelpOptions = true,
            description = "Drops the triggers and generated functions; the history table is kept.")
    static final class Uninstall implements Callable<Integer> {
        @Mixin Options options;
        @Mixin ConnectionOptions connection;

        @Override
        public Integer call() {
            TemporalTable table = options.build();
            table.uninstall(connection.connectPostgres());
            Output.println("history of " + table.table() + " uninstalled; " + table.historyTable() + " is kept");
            return 0;
        }
    }

    @Command(name = "prune", mixinStandardHelpOptions = true,
            description = "Deletes closed versions that ended before --before, or before now minus --retention.")
    static final class Prune implements Callable<Integer> {
        @Mixin Options options;
        @Mixin ConnectionOptions connection;

        @Option(names = "--before", paramLabel = "INSTANT",
                description = "The cutoff, ISO-8601 such as 2026-01-01T00:00:00Z (instead of --retention).")
        Instant before;

        @Override
        public Integer call() {
            TemporalTable table = options.build();
            if (before != null && options.retention != null) {
                throw new picocli.CommandLine.ParameterException(connection.command.commandLine(),
                        "--before and --retention exclude each other: give the cutoff one way");
            }
            if (before == null && options.retention == null) {
                throw new picocli.CommandLine.ParameterException(connection.command.commandLine(),
                        "prune needs the cutoff: --before INSTANT or --retention DURATION");
            }
            DataSource dataSource = connection.connectPostgres();
            PruneReport report = before != null ? table.prune(dataSource, before) : table.prune(dataSource);
            Output.println("history of " + table.table() + " pruned: " + report.deletedRows() + " versions deleted in "
                    + report.batches() + " batches; as-of queries before " + report.horizon() + " now fail");
            return 0;
        }
    }
}
