package io.tidemark.cli.internal;

import io.tidemark.cli.ExitCode;
import io.tidemark.sync.TidemarkException;
import picocli.CommandLine;
import picocli.CommandLine.IExecutionExceptionHandler;
import picocli.CommandLine.ParseResult;

/**
 * Turns what a command threw into one message on stderr and an exit code: the API's errors keep their code and
 * message, which name the object and the problem.
 */
public final class Failures implements IExecutionExceptionHandler {

    @Override
    public int handleExecutionException(Exception e, CommandLine command, ParseResult parsed) {
        java.io.PrintWriter err = command.getErr();
        if (e instanceof Finding) {
            err.println("tidemark: " + e.getMessage());
            err.flush();
            return ExitCode.FINDING;
        }
        if (e instanceof CannotConnect) {
            err.println("tidemark: cannot connect: " + e.getMessage());
            err.flush();
            return ExitCode.CANNOT_CONNECT;
        }
        if (e instanceof TidemarkException t) {
            err.println("tidemark: " + t.code() + ": " + t.getMessage());
            err.flush();
            return exitCode(t);
        }
        if (e instanceof java.io.UncheckedIOException io) {
            err.println("tidemark: " + io.getMessage() + ": " + io.getCause().getMessage());
            err.flush();
            return ExitCode.FAILED;
        }
        err.println("tidemark: unexpected failure (please report it with the command line that caused it):");
        e.printStackTrace(err);
        err.flush();
        return ExitCode.FAILED;
    }

    static int exitCode(TidemarkException e) {
        return switch (e.code()) {
            case CONNECTION_FAILED -> ExitCode.CANNOT_CONNECT;
            case INVALID_CONFIGURATION, INVALID_IDENTIFIER -> ExitCode.USAGE;
            case SCHEMA_DRIFT -> ExitCode.FINDING;
            default -> ExitCode.FAILED;
        };
    }
}
