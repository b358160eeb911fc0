package io.tidemark.sync.internal.engine;

import io.tidemark.sync.ErrorCode;
import io.tidemark.sync.ObjectReport;
import io.tidemark.sync.Outcome;
import io.tidemark.sync.SyncEngine;
import io.tidemark.sync.TidemarkException;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.time.temporal.ChronoUnit;

/**
 * What an operator reads about one object's failures: one WARN per failed cycle with the cause and the time of the
 * next attempt, the same failure repeated summarised (the first, then every {@value #REPEAT_EVERY}th, and at once
 * when the failure changes), and one INFO when the object recovers, saying how long it failed and what the
 * recovering cycle delivered. The object's name is written once per line.
 */
final class FailureLog {

    /** Logged under the engine's name, where users look for it. */
    private static final Logger LOG = LoggerFactory.getLogger(SyncEngine.class);

    /** Of a run of identical failures, every this many is logged at WARN; the ones between at DEBUG. */
    static final int REPEAT_EVERY = 10;

    private final String objectName;
    private final Clock clock;

    // Guarded by "this".
    private int failures;
    private int repeats;
    private Instant failingSince;
    private String lastFailure;

    FailureLog(String objectName, Clock clock) {
        this.objectName = objectName;
        this.clock = clock;
    }

    /**
     * A cycle failed or was blocked.
     *
     * @param nextAttempt how long until the poller tries again; null when no poller runs (a manual runOnce)
     */
    synchronized void failed(ObjectReport report, Duration nextAttempt) {
        TidemarkException error = report.error().orElse(null);
        String cause = error == null ? "no report" : error.code() + ": " + withoutObjectName(error.getMessage());
        Instant now = clock.instant();
        if (failures == 0) {
            failingSince = now;
        }
        failures++;
        boolean same = cause.equals(lastFailure);
        repeats = same ? repeats + 1 : 1;
        lastFailure = cause;
        String what = report.outcome() == Outcome.BLOCKED ? "blocked" : "failed";
        String next = next(nextAttempt, now, error != null && error.code() == ErrorCode.CONNECTION_FAILED);
        if (!same) {
            LOG.warn("[{}] cycle {}{}: {}; {}", objectName, what, failures > 1 ? " (" + ordinal(failures)
                    + " in a row)" : "", cause, next);
        } else if (repeats % REPEAT_EVERY == 0) {
            LOG.warn("[{}] cycle {} again, {} times in a row since {} (the same failure {} times): {}; {}",
                    objectName, what, failures, failingSince.truncatedTo(ChronoUnit.MILLIS), repeats, cause, next);
        } else {
            LOG.debug("[{}] cycle {} again ({} in a row, same failure): {}; {}", objectName, what, failures, cause,
                    next);
        }
    }

    /** A cycle succeeded: after failures, one INFO line saying so. */
    synchronized void succeeded(ObjectReport report) {
        if (failures == 0) {
            return;
        }
        Duration failing = Duration.between(failingSince, clock.instant());
        LOG.info("[{}] recovered after failing for {} ({} failed cycles): {}", objectName, human(failing), failures,
                report.outcome() == Outcome.DELIVERED ? "delivered " + report.changeCount() + " changes"
                        : report.outcome() == Outcome.SEEDED ? "seeded" : "no changes were waiting");
        failures = 0;
        repeats = 0;
        failingSince = null;
        lastFailure = null;
    }

    private static String next(Duration nextAttempt, Instant now, boolean unreachable) {
        if (nextAttempt == null) {
            return "no background polling: the next attempt is the next runOnce";
        }
        String at = "next attempt at " + now.plus(nextAttempt).truncatedTo(ChronoUnit.SECONDS) + " (in "
                + human(nextAttempt) + ")";
        return unreachable ? at + ", or as soon as the database answers again" : at;
    }

    /** "[Items] could not read" becomes "could not read": the line names the object already. */
    private String withoutObjectName(String message) {
        String prefix = "[" + objectName + "] ";
        return message != null && message.startsWith(prefix) ? message.substring(prefix.length()) : message;
    }

    private static String ordinal(int n) {
        int mod100 = n % 100;
        String suffix = mod100 >= 11 && mod100 <= 13 ? "th"
                : n % 10 == 1 ? "st" : n % 10 == 2 ? "nd" : n % 10 == 3 ? "rd" : "th";
        return n + suffix;
    }

    static String human(Duration d) {
        long millis = d.toMillis();
        if (millis < 1000) {
            return millis + " ms";
        }
        if (millis < 60_000) {
            return String.format(java.util.Locale.ROOT, "%.1f s", millis / 1000.0);
        }
        long seconds = d.toSeconds();
        return seconds / 60 + " min " + seconds % 60 + " s";
    }
}
