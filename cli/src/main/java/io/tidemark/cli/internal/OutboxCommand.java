package io.tidemark.cli.internal;

import io.tidemark.postgres.CaptureShape;
import io.tidemark.postgres.OutboxDifference;
import io.tidemark.postgres.PostgresOutbox;
import io.tidemark.postgres.TruncatePolicy;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Option;
import picocli.CommandLine.Parameters;

import java.util.List;
import java.util.Map;
import java.util.concurrent.Callable;

/** {@code tidemark outbox ...}: the generated outbox of a PostgreSQL table ({@link PostgresOutbox}). */
@Command(name = "outbox", mixinStandardHelpOptions = true,
        description = "The generated outbox of a PostgreSQL table: script, install, verify, uninstall.",
        subcommands = {OutboxCommand.Script.class, OutboxCommand.Install.class, OutboxCommand.Verify.class,
                OutboxCommand.Uninstall.class})
public final class OutboxCommand extends ParentCommand {

    /** The options of {@link PostgresOutbox.Builder}, one for one. */
    static final class Options {
        @Parameters(index = "0", paramLabel = "TABLE", description = "The table, schema.name (schema public if none).")
        String table;

        @Option(names = "--key", split = ",", paramLabel = "COLUMN",
                description = "The key columns; default the primary key, read from the database.")
        List<String> key;

        @Option(names = "--columns", split = ",", paramLabel = "COLUMN",
                description = "The captured columns; default every column, read from the database.")
        List<String> columns;

        @Option(names = "--payload-key", paramLabel = "COLUMN=KEY",
                description = "The JSON key a column travels under, such as item_code=ItemCode. Repeatable.")
        Map<String, String> payloadKeys = new java.util.LinkedHashMap<>();

        @Option(names = "--outbox-table", paramLabel = "NAME", description = "Default <table>_outbox.")
        String outboxTable;

        @Option(names = "--change-function", paramLabel = "NAME", description = "Default <table>_changes.")
        String changeFunction;

        @Option(names = "--truncate", paramLabel = "POLICY",
                description = "What a TRUNCATE of the table does: ${COMPLETION-CANDIDATES}; default REFUSE.")
        TruncatePolicy truncate;

        @Option(names = "--capture", paramLabel = "SHAPE",
                description = "What the outbox stores per change: ${COMPLETION-CANDIDATES}; default FULL_IMAGE.")
        CaptureShape capture;

        @Option(names = "--notify-channel", paramLabel = "CHANNEL", description = "Default tidemark.")
        String channel;

        @Option(names = "--no-notifications", description = "The capture does not NOTIFY on commit.")
        boolean noNotifications;

        PostgresOutbox build() {
            PostgresOutbox.Builder b = PostgresOutbox.forTable(table);
            if (key != null) {
                b.key(key.toArray(String[]::new));
            }
            if (columns != null) {
                b.columns(columns.toArray(String[]::new));
            }
            payloadKeys.forEach(b::payloadKey);
            if (outboxTable != null) {
                b.outboxTable(outboxTable);
            }
            if (changeFunction != null) {
                b.changeFunction(changeFunction);
            }
            if (truncate != null) {
                b.truncate(truncate);
            }
            if (capture != null) {
                b.capture(capture);
            }
            if (channel != null) {
                b.notifyChannel(channel);
            }
            return b.notifications(!noNotifications).build();
        }
    }

    @Command(name = "script", mixinStandardHelpOptions = true,
            description = {"Prints the SQL that install runs, as PostgresOutbox.script() generates it.",
                    "Without --url, needs --key and --columns; with --url, reads what is not given from the database."})
    static final class Script implements Callable<Integer> {
        @Mixin Options options;
        @Mixin ConnectionOptions connection;
        @Mixin MigrationOptions migration;

        @Override
        public Integer call() {
            PostgresOutbox outbox = options.build();
            String script = connection.given() ? outbox.script(connection.connectPostgres()) : outbox.script();
            migration.emit(script, "tidemark_outbox_" + outbox.table(), MigrationFiles.Dialect.POSTGRES);
            return 0;
        }
    }

    @Command(name = "install", mixinStandardHelpOptions = true,
            description = "Installs the outbox in one transaction; does nothing when this configuration is installed.")
    static final class Install implements Callable<Integer> {
        @Mixin Options options;
        @Mixin ConnectionOptions connection;

        @Override
        public Integer call() {
            PostgresOutbox outbox = options.build();
            outbox.install(connection.connectPostgres());
            Output.println("outbox of " + outbox.table() + " installed: " + outbox.outboxTable() + ", change function "
                    + outbox.changeFunction());
            return 0;
        }
    }

    @Command(name = "verify", mixinStandardHelpOptions = true,
            description = "Lists every difference between the installed outbox and these options; exit 1 if any.")
    static final class Verify implements Callable<Integer> {
        @Mixin Options options;
        @Mixin ConnectionOptions connection;

        @Override
        public Integer call() {
            PostgresOutbox outbox = options.build();
            List<OutboxDifference> differences = outbox.differences(connection.connectPostgres());
            if (differences.isEmpty()) {
                Output.println("outbox of " + outbox.table() + ": installed as configured");
                return 0;
            }
            differences.forEach(d -> Output.println(d.toString()));
            throw new Finding("outbox of " + outbox.table() + ": " + differences.size() + " difference"
                    + (differences.size() == 1 ? "" : "s"));
        }
    }

    @Command(name = "uninstall", mixinStandardHelpOptions = true,
            description = "Drops the outbox's triggers, functions and tables, its captured changes with them.")
    static final class Uninstall implements Callable<Integer> {
        @Mixin Options options;
        @Mixin ConnectionOptions connection;

        @Override
        public Integer call() {
            PostgresOutbox outbox = options.build();
            outbox.uninstall(connection.connectPostgres());
            Output.println("outbox of " + outbox.table() + " uninstalled");
            return 0;
        }
    }
}
