package io.tidemark.cli;

/** The exit codes of the {@code tidemark} command, documented in cli/README.md. */
public final class ExitCode {

    /** Done; or, for a check, nothing found. */
    public static final int OK = 0;
    /** A check found something: drift, differences, a procedure that is not SAFE, an object not paused for reset. */
    public static final int FINDING = 1;
    /** The command line is wrong: an unknown option, a missing argument, a value the API refuses. */
    public static final int USAGE = 2;
    /** The database could not be reached or refused the login. */
    public static final int CANNOT_CONNECT = 3;
    /** The database refused the operation (a missing table, a permission, a conflict); the error names it. */
    public static final int FAILED = 4;

    private ExitCode() {
    }
}
