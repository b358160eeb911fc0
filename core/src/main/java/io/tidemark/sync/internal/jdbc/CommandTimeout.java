package io.tidemark.sync.internal.jdbc;

import io.tidemark.sync.ErrorCode;
import io.tidemark.sync.TidemarkException;

import java.time.Duration;

/**
 * The command timeout every Tidemark call to a database runs under, and its one check. JDBC takes a query timeout
 * in whole seconds as an {@code int}, so a timeout is at least one second and at most {@link Integer#MAX_VALUE}
 * seconds; anything else is a configuration error, never an {@link ArithmeticException} later.
 */
public final class CommandTimeout {

    /** The default: 300 seconds, as in docs/contract.md. */
    public static final Duration DEFAULT = Duration.ofSeconds(300);

    private CommandTimeout() {
    }

    /**
     * The timeout in whole seconds for {@link java.sql.Statement#setQueryTimeout(int)}.
     *
     * @param what names the setting in the message, e.g. {@code "PostgresProvider commandTimeout"}
     * @throws TidemarkException {@link ErrorCode#INVALID_CONFIGURATION} for null, less than a second, or too long
     */
    public static int seconds(Duration timeout, String what) {
        if (timeout == null || timeout.isNegative() || timeout.toSeconds() < 1) {
            throw new TidemarkException(ErrorCode.INVALID_CONFIGURATION,
                    what + " must be at least one second, got " + timeout);
        }
        if (timeout.toSeconds() > Integer.MAX_VALUE) {
            throw new TidemarkException(ErrorCode.INVALID_CONFIGURATION, what + " of " + timeout
                    + " is too long: JDBC takes whole seconds up to " + Integer.MAX_VALUE + " (about 68 years)");
        }
        return (int) timeout.toSeconds();
    }

    /** Checks {@code timeout} and returns it, for builders that store the {@link Duration}. */
    public static Duration checked(Duration timeout, String what) {
        seconds(timeout, what);
        return timeout;
    }
}
