package io.tidemark.cli.internal;

import io.tidemark.sqlserver.ChangeProcedureGenerator;
import io.tidemark.sqlserver.ChangeTrackingSetup;
import io.tidemark.sqlserver.LeastPrivilegeRole;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Option;
import picocli.CommandLine.Parameters;
import picocli.CommandLine.ParameterException;

import javax.sql.DataSource;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.Callable;
import java.util.function.Consumer;

/**
 * {@code tidemark sqlserver ...}: the SQL Server scripts of provider-mssql. Each prints its script, writes it as a
 * migration, or with {@code --apply} runs it against {@code --url}.
 */
@Command(name = "sqlserver", mixinStandardHelpOptions = true,
        description = "SQL Server scripts: Change Tracking setup, change procedure, least-privilege role.",
        subcommands = {SqlServerCommand.Setup.class, SqlServerCommand.Procedure.class, SqlServerCommand.Role.class})
public final class SqlServerCommand extends ParentCommand {

    /** Print, write as a migration, or apply: the options every subcommand has (picocli reads inherited fields). */
    abstract static class Target {
        @Mixin ConnectionOptions connection;
        @Mixin MigrationOptions migration;

        @Option(names = "--apply", description = "Run the script against --url (a jdbc:sqlserver: URL) instead of"
                + " printing it.")
        boolean apply;

        void deliver(String script, String name, MigrationFiles.Dialect dialect, Consumer<DataSource> install,
                     String done) {
            if (apply && migration.writesFile()) {
                throw new ParameterException(connection.command.commandLine(),
                        "--apply runs the script; --flyway and --liquibase write it: choose one");
            }
            if (!apply && connection.url != null) {
                throw new ParameterException(connection.command.commandLine(), "--url is only used with --apply:"
                        + " without it the script is printed (or written with --flyway or --liquibase)");
            }
            if (!apply) {
                migration.emit(script, name, dialect);
                return;
            }
            if (connection.url != null && !connection.url.startsWith("jdbc:sqlserver:")) {
                throw new ParameterException(connection.command.commandLine(),
                        "--apply needs a SQL Server database: --url jdbc:sqlserver://host:1433;databaseName=db");
            }
            install.accept(connection.connect());
            Output.println(done);
        }
    }

    @Command(name = "setup", mixinStandardHelpOptions = true,
            description = "Change Tracking on the database and the tables (ChangeTrackingSetup.script()).")
    static final class Setup extends Target implements Callable<Integer> {
        @Parameters(paramLabel = "TABLE", arity = "0..*", description = "Tables to track, schema.name (dbo if none).")
        List<String> tables = List.of();

        @Option(names = "--retention", paramLabel = "DURATION", converter = DurationConverter.class,
                description = "How long Change Tracking keeps changes, whole minutes; default 7d.")
        Duration retention;

        @Option(names = "--no-track-columns-updated",
                description = "Do not record which columns an update changed (table-level procedures only).")
        boolean noColumns;

        @Override
        public Integer call() {
            ChangeTrackingSetup.Builder b = ChangeTrackingSetup.builder();
            if (retention != null) {
                b.retention(retention);
            }
            tables.forEach(t -> b.table(t, !noColumns));
            ChangeTrackingSetup setup = b.build();
            deliver(setup.script(), "tidemark_sqlserver_change_tracking",
                    MigrationFiles.Dialect.SQLSERVER_NO_TRANSACTION, setup::install, "Change Tracking set up");
            return 0;
        }
    }

    @Command(name = "procedure", mixinStandardHelpOptions = true,
            description = "The change procedure of a table (ChangeProcedureGenerator.script()).")
    static final class Procedure extends Target implements Callable<Integer> {
        @Parameters(index = "0", paramLabel = "TABLE", description = "The table, schema.name (dbo if none).")
        String table;

        @Option(names = "--key", split = ",", paramLabel = "COLUMN", required = true,
                description = "The primary key columns, in key order.")
        List<String> key;

        @Option(names = "--columns", split = ",", paramLabel = "COLUMN", description = "The other columns to send.")
        List<String> columns = List.of();

        @Option(names = "--procedure", paramLabel = "NAME", description = "Default <schema>.<table>_changes.")
        String procedure;

        @Option(names = "--level", paramLabel = "LEVEL", description = "${COMPLETION-CANDIDATES}; default TABLE.")
        ChangeProcedureGenerator.Level level;

        @Override
        public Integer call() {
            ChangeProcedureGenerator.Builder b = ChangeProcedureGenerator.forTable(table)
                    .keyColumns(key.toArray(String[]::new)).columns(columns.toArray(String[]::new));
            if (procedure != null) {
                b.procedure(procedure);
            }
            if (level != null) {
                b.level(level);
            }
            ChangeProcedureGenerator generator = b.build();
            deliver(generator.script(), "tidemark_sqlserver_procedure_" + generator.procedureName(),
                    MigrationFiles.Dialect.SQLSERVER, generator::install,
                    "procedure " + generator.procedureName() + " created or altered");
            return 0;
        }
    }

    @Command(name = "role", mixinStandardHelpOptions = true,
            description = "A least-privilege database role for the engine (LeastPrivilegeRole.script()).")
    static final class Role extends Target implements Callable<Integer> {
        @Parameters(index = "0", paramLabel = "ROLE", description = "The role, such as tidemark_reader.")
        String role;

        @Option(names = "--procedure", paramLabel = "NAME", description = "EXECUTE on a change procedure. Repeatable.")
        List<String> procedures = List.of();

        @Option(names = "--table", paramLabel = "NAME", description = "VIEW CHANGE TRACKING on a table. Repeatable.")
        List<String> tables = List.of();

        @Option(names = "--store-schema", paramLabel = "SCHEMA", description = "Access to the store's schema.")
        String storeSchema;

        @Option(names = "--member", paramLabel = "USER", description = "A user to add to the role. Repeatable.")
        List<String> members = List.of();

        @Override
        public Integer call() {
            LeastPrivilegeRole.Builder b = LeastPrivilegeRole.named(role);
            procedures.forEach(b::procedure);
            tables.forEach(b::table);
            if (storeSchema != null) {
                b.storeSchema(storeSchema);
            }
            members.forEach(b::member);
            LeastPrivilegeRole built = b.build();
            deliver(built.script(), "tidemark_sqlserver_role_" + built.role(), MigrationFiles.Dialect.SQLSERVER,
                    built::install, "role " + built.role() + " set up");
            return 0;
        }
    }
}
