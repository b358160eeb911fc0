package io.tidemark.cli.internal;

import io.tidemark.postgres.PostgresLogicalCapture;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.ParameterException;
import picocli.CommandLine.Parameters;
import picocli.CommandLine.Spec;

import javax.sql.DataSource;
import java.util.List;
import java.util.concurrent.Callable;

/** {@code tidemark logical ...}: the log-based capture of PostgreSQL tables ({@link PostgresLogicalCapture}). */
@Command(name = "logical", mixinStandardHelpOptions = true,
        description = "Log-based capture of PostgreSQL tables (publication and replication slot): script, install,"
                + " status, uninstall.",
        subcommands = {LogicalCommand.Script.class, LogicalCommand.Install.class, LogicalCommand.Status.class,
                LogicalCommand.Uninstall.class})
public final class LogicalCommand extends ParentCommand {

    /** The options of {@link PostgresLogicalCapture.Builder}, one for one. */
    static final class Options {
        @Parameters(arity = "1..*", paramLabel = "TABLE",
                description = "The captured tables, schema.name (schema public if none).")
        List<String> tables;

        @Option(names = "--slot", paramLabel = "NAME", description = "The replication slot: lower-case letters,"
                + " digits and underscores; default " + PostgresLogicalCapture.DEFAULT_SLOT + ".")
        String slot;

        @Option(names = "--publication", paramLabel = "NAME", description = "The publication: lower-case letters,"
                + " digits and underscores; default the slot's name.")
        String publication;

        @Option(names = "--old-rows", description = "Log whole old rows (REPLICA IDENTITY FULL, set by install):"
                + " updates carry $changed, deletes the whole row, at the price of more WAL per update and delete.")
        boolean oldRows;

        PostgresLogicalCapture build() {
            PostgresLogicalCapture.Builder b = PostgresLogicalCapture.forTables(tables.toArray(String[]::new));
            if (slot != null) {
                b.slot(slot);
            }
            if (publication != null) {
                b.publication(publication);
            }
            return b.oldRows(oldRows).build();
        }
    }

    @Command(name = "script", mixinStandardHelpOptions = true,
            description = {"Prints the SQL that install runs, as PostgresLogicalCapture.script() generates it.",
                    "Run it with psql (each statement commits on its own): the slot cannot be created in a"
                            + " transaction that has written, so it is not written as a Flyway or Liquibase"
                            + " migration."})
    static final class Script implements Callable<Integer> {
        @Spec CommandSpec spec;
        @Mixin Options options;

        /*
         * Flyway and Liquibase run a PostgreSQL migration in one transaction, and the script's slot comes after the
         * publication it writes: PostgreSQL refuses that (LogicalCommandIT runs both tools to show it). The options
         * exist only to say so instead of "unknown option".
         */
        @Option(names = {"--flyway", "--liquibase"}, hidden = true, paramLabel = "DIR")
        void migrationFile(String ignored) {
            throw new ParameterException(spec.commandLine(), "logical script writes no migration file: its last"
                    + " statement creates a replication slot, which PostgreSQL refuses in a transaction that has"
                    + " written (the publication before it), and Flyway and Liquibase run a PostgreSQL migration in"
                    + " one transaction. Use tidemark logical install, or run the printed script with psql, which"
                    + " commits each statement on its own.");
        }

        @Override
        public Integer call() {
            Output.print(options.build().script());
            return 0;
        }
    }

    @Command(name = "install", mixinStandardHelpOptions = true,
            description = {"Checks wal_level and the tables, then creates what is missing: the replica identities"
                    + " (--old-rows), the publication or the tables it lacks, the slot. Does nothing when installed.",
                    "Needs a role with the REPLICATION attribute that owns the tables."})
    static final class Install implements Callable<Integer> {
        @Mixin Options options;
        @Mixin ConnectionOptions connection;

        @Override
        public Integer call() {
            PostgresLogicalCapture capture = options.build();
            DataSource dataSource = connection.connectPostgres();
            capture.install(dataSource);
            Output.println("logical capture installed: slot " + capture.slot() + ", publication "
                    + capture.publication() + " of " + String.join(", ", CaptureStatus.names(capture)));
            return 0;
        }
    }

    @Command(name = "status", mixinStandardHelpOptions = true,
            description = {"Shows wal_level, the publication and the tables it publishes, and the slot: active or"
                    + " not, its confirmed_flush_lsn and the WAL it keeps on the server.",
                    "Exit 1 when the capture is not installed as these options say."})
    static final class Status implements Callable<Integer> {
        @Mixin Options options;
        @Mixin ConnectionOptions connection;

        @Override
        public Integer call() {
            PostgresLogicalCapture capture = options.build();
            CaptureStatus status = CaptureStatus.read(connection.connectPostgres(), capture);
            status.lines(capture).forEach(Output::println);
            List<String> problems = status.problems(capture);
            if (problems.isEmpty()) {
                return 0;
            }
            problems.forEach(p -> Output.println("problem: " + p));
            throw new Finding("logical capture " + capture.slot() + ": " + problems.size() + " problem"
                    + (problems.size() == 1 ? "" : "s"));
        }
    }

    @Command(name = "uninstall", mixinStandardHelpOptions = true,
            description = {"Drops the slot (the server frees the WAL it kept) and the publication. Readers lose their"
                    + " position: reset the tracked objects after a new install.",
                    "Refused while a provider streams the slot."})
    static final class Uninstall implements Callable<Integer> {
        @Mixin Options options;
        @Mixin ConnectionOptions connection;

        @Override
        public Integer call() {
            PostgresLogicalCapture capture = options.build();
            DataSource dataSource = connection.connectPostgres();
            capture.uninstall(dataSource);
            Output.println("logical capture uninstalled: slot " + capture.slot() + " and publication "
                    + capture.publication() + " no longer exist");
            return 0;
        }
    }
}
