package io.tidemark.cli;

import io.tidemark.cli.internal.Failures;
import io.tidemark.cli.internal.HistoryCommand;
import io.tidemark.cli.internal.LogicalCommand;
import io.tidemark.cli.internal.OutboxCommand;
import io.tidemark.cli.internal.ParentCommand;
import io.tidemark.cli.internal.SqlServerCommand;
import io.tidemark.cli.internal.StoreCommands;
import io.tidemark.cli.internal.VerifyContractCommand;
import picocli.CommandLine;
import picocli.CommandLine.Command;

/**
 * The {@code tidemark} command: prints, applies or writes as migration files what the Java API generates, verifies a
 * change function against the procedure contract, and shows and steers the watermark store. See cli/README.md.
 */
@Command(name = "tidemark",
        mixinStandardHelpOptions = true,
        versionProvider = Version.class,
        description = "Tidemark's database side from the command line: scripts, installs, checks and the watermark store.",
        subcommands = {
                OutboxCommand.class,
                LogicalCommand.class,
                HistoryCommand.class,
                SqlServerCommand.class,
                VerifyContractCommand.class,
                StoreCommands.Status.class,
                StoreCommands.Pause.class,
                StoreCommands.Resume.class,
                StoreCommands.Reset.class,
                CommandLine.HelpCommand.class
        },
        exitCodeListHeading = "%nExit codes:%n",
        exitCodeList = {
                "0:done; for a check, nothing found",
                "1:a finding (drift, differences, a capture not installed, a procedure not SAFE, reset of an object"
                        + " not paused)",
                "2:usage (unknown option, missing or refused value)",
                "3:cannot connect (unreachable database, login refused)",
                "4:the database refused the operation (the message names the object and the problem)"})
public final class TidemarkCli extends ParentCommand {

    public static void main(String[] args) {
        System.exit(run(args));
    }

    /** Runs the command line and returns its exit code (see {@link ExitCode}). */
    public static int run(String... args) {
        return commandLine().execute(args);
    }

    /** A usage error: the message and where the options are explained, not the whole usage text. */
    private static int usageError(CommandLine.ParameterException e, String[] args) {
        CommandLine command = e.getCommandLine();
        java.io.PrintWriter err = command.getErr();
        err.println("tidemark: " + e.getMessage());
        CommandLine.UnmatchedArgumentException.printSuggestions(e, err);
        err.println("Run '" + command.getCommandSpec().qualifiedName() + " --help' for its options.");
        err.flush();
        return ExitCode.USAGE;
    }

    /** The configured parser: exit codes per {@link ExitCode}, errors as one message on stderr. */
    public static CommandLine commandLine() {
        CommandLine cli = new CommandLine(new TidemarkCli());
        cli.setExecutionExceptionHandler(new Failures());
        cli.setParameterExceptionHandler(TidemarkCli::usageError);
        cli.setCaseInsensitiveEnumValuesAllowed(true);
        cli.setUsageHelpAutoWidth(true);
        return cli;
    }
}
