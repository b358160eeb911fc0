package io.tidemark.postgres.internal.horizon;

import io.tidemark.sync.Diagnostic;

import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.ConcurrentHashMap;

/**
 * Decides, per tracked object, when changes held back by an old transaction are worth a diagnostic, so that a
 * healthy system pays no query for it:
 * <ul>
 *   <li>each response says (for free, see {@link ResponseHints}) whether committed changes wait at the horizon;</li>
 *   <li>on a busy system that is true at most polls, briefly: the horizon moves on from one poll to the next.
 *       Only when the <em>same</em> horizon has held changes back for the threshold is the transaction known to
 *       be old (a transaction id never comes back), and only then is {@code pg_stat_activity} queried;</li>
 *   <li>while it lasts, the query runs again at most once per check interval; in between the last answer is
 *       reported again, at INFO, so the status shows it every cycle and the log once per interval.</li>
 * </ul>
 */
public final class HorizonWatch {

    /** Looks the holder of a horizon up; called at most once per check interval per object. */
    @FunctionalInterface
    public interface Lookup {
        Diagnostic describe(long horizon, Instant heldSince);
    }

    private final Duration threshold;
    private final Duration checkInterval;
    private final Map<String, State> states = new ConcurrentHashMap<>();

    private static final class State {
        final long horizon;
        final Instant heldSince;
        Instant lastLookup;
        Diagnostic lastAnswer;

        State(long horizon, Instant heldSince) {
            this.horizon = horizon;
            this.heldSince = heldSince;
        }
    }

    public HorizonWatch(Duration threshold, Duration checkInterval) {
        this.threshold = threshold;
        this.checkInterval = checkInterval;
    }

    /** Records what a response said; a response without the hint, or with nothing held back, clears the object. */
    public void observe(String objectName, Optional<ResponseHints.Hint> hint, Instant now) {
        if (hint.isEmpty() || !hint.get().heldBack()) {
            states.remove(objectName);
            return;
        }
        long horizon = hint.get().horizon();
        states.compute(objectName, (name, s) -> s != null && s.horizon == horizon ? s : new State(horizon, now));
    }

    /** The diagnostic to report after this cycle, if any. */
    public List<Diagnostic> diagnose(String objectName, Instant now, Lookup lookup) {
        State s = states.get(objectName);
        if (s == null) {
            return List.of();
        }
        synchronized (s) {
            if (Duration.between(s.heldSince, now).compareTo(threshold) < 0) {
                return List.of();
            }
            if (s.lastLookup == null || Duration.between(s.lastLookup, now).compareTo(checkInterval) >= 0) {
                s.lastAnswer = lookup.describe(s.horizon, s.heldSince);
                s.lastLookup = now;
                return List.of(s.lastAnswer);
            }
            Diagnostic last = s.lastAnswer;
            return List.of(new Diagnostic(Diagnostic.Severity.INFO, last.code(), last.message(), last.details()));
        }
    }
}
