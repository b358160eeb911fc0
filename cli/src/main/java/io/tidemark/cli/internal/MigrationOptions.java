package io.tidemark.cli.internal;

import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.ParameterException;
import picocli.CommandLine.Spec;

import java.nio.file.Path;

/**
 * {@code --flyway DIR} or {@code --liquibase DIR}: write the script as a migration file there instead of printing
 * it. Without either, the script goes to stdout.
 */
public final class MigrationOptions {

    @Spec(Spec.Target.MIXEE)
    CommandSpec command;

    @Option(names = "--flyway", paramLabel = "DIR",
            description = "Write the script as a Flyway migration V<version>__<description>.sql into DIR.")
    Path flyway;

    @Option(names = "--flyway-version", paramLabel = "VERSION", description = "The migration's version, such as 7"
            + " or 2.1; default: the highest version in DIR with its first part plus one (1 in an empty DIR).")
    String flywayVersion;

    @Option(names = "--liquibase", paramLabel = "DIR",
            description = "Write the script as a Liquibase formatted SQL changelog into DIR.")
    Path liquibase;

    @Option(names = "--changeset-author", paramLabel = "AUTHOR", defaultValue = "tidemark",
            description = "The Liquibase changeset's author; default ${DEFAULT-VALUE}.")
    String author;

    @Option(names = "--changeset-id", paramLabel = "ID",
            description = "The Liquibase changeset's id; default the file's name without .sql.")
    String changesetId;

    /**
     * Prints {@code script}, or writes it as the migration file asked for and prints the file's path.
     *
     * @param migration what the file is named after, such as {@code tidemark_history_public.items}
     */
    void emit(String script, String migration, MigrationFiles.Dialect dialect) {
        if (flyway != null && liquibase != null) {
            throw usage("--flyway and --liquibase exclude each other: choose the tool that runs your migrations");
        }
        if (flyway == null && flywayVersion != null) {
            throw usage("--flyway-version needs --flyway DIR");
        }
        try {
            if (flyway != null) {
                Output.println(MigrationFiles.flyway(flyway, flywayVersion, migration, script, dialect).toString());
            } else if (liquibase != null) {
                Output.println(MigrationFiles.liquibase(liquibase, migration, changesetId, author, script, dialect)
                        .toString());
            } else {
                Output.print(script);
            }
        } catch (IllegalArgumentException e) {
            throw usage(e.getMessage());
        }
    }

    boolean writesFile() {
        return flyway != null || liquibase != null;
    }

    private ParameterException usage(String message) {
        return new ParameterException(command.commandLine(), message);
    }
}
