package io.tidemark.sync.internal.engine;

import io.tidemark.sync.DestinationReport;
import io.tidemark.sync.ObjectReport;
import io.tidemark.sync.ObjectStatus;
import io.tidemark.sync.Outcome;

import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayDeque;
import java.util.Deque;
import java.util.HashMap;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;

/**
 * What the engine remembers in memory about each object's recent cycles, for {@link ObjectStatus} and the health
 * rules: failures in a row and since when, the last success, each destination's last delivery, and when pages were
 * dead-lettered (to see them pile up). Fed with every report, the background poller's and {@code runOnce}'s alike.
 */
final class ObjectActivity {

    /** Dead-letter times older than this are dropped: no health window is longer. */
    static final Duration LONGEST_WINDOW = Duration.ofDays(1);

    private final Map<String, Entry> entries = new ConcurrentHashMap<>();
    private final Clock clock;

    ObjectActivity(Clock clock) {
        this.clock = clock;
    }

    private static final class Entry {
        int failures;
        Instant failingSince;
        Instant lastSuccess;
        final Map<String, Instant> lastDeliveries = new HashMap<>();
        /** Per destination: when each page was dead-lettered, oldest first. */
        final Map<String, Deque<Instant>> deadLettered = new HashMap<>();
    }

    /** Right after the cycle: its end is now, on the engine's clock. */
    void record(ObjectReport report) {
        Instant end = clock.instant();
        Entry e = entries.computeIfAbsent(report.objectName(), name -> new Entry());
        synchronized (e) {
            if (report.outcome() == Outcome.PAUSED) {
                return; // nothing was attempted: neither a success nor a failure
            }
            if (report.isSuccess()) {
                e.failures = 0;
                e.failingSince = null;
                e.lastSuccess = end;
            } else if (e.failures++ == 0) {
                e.failingSince = report.startedAt();
            }
            for (DestinationReport d : report.destinations()) {
                if (d.pageCount() > 0) {
                    e.lastDeliveries.put(d.destination(), end);
                }
                Deque<Instant> times = e.deadLettered.computeIfAbsent(d.destination(), k -> new ArrayDeque<>());
                for (int i = 0; i < d.deadLetteredPages(); i++) {
                    times.addLast(end);
                }
                while (!times.isEmpty() && times.peekFirst().isBefore(end.minus(LONGEST_WINDOW))) {
                    times.removeFirst();
                }
            }
        }
    }

    ObjectStatus.Activity of(String objectName) {
        Entry e = entries.get(objectName);
        if (e == null) {
            return ObjectStatus.Activity.NONE;
        }
        synchronized (e) {
            return new ObjectStatus.Activity(e.failures, e.failingSince, e.lastSuccess, e.lastDeliveries);
        }
    }

    /** Per destination of the object: pages dead-lettered by this engine at or after {@code since}. */
    Map<String, Integer> deadLetteredSince(String objectName, Instant since) {
        Entry e = entries.get(objectName);
        Map<String, Integer> counts = new HashMap<>();
        if (e == null) {
            return counts;
        }
        synchronized (e) {
            e.deadLettered.forEach((destination, times) -> {
                int n = (int) times.stream().filter(t -> !t.isBefore(since)).count();
                if (n > 0) {
                    counts.put(destination, n);
                }
            });
        }
        return counts;
    }

    /** Forgets an object no longer tracked (a re-added one starts afresh). */
    void forget(String objectName) {
        entries.remove(objectName);
    }
}
