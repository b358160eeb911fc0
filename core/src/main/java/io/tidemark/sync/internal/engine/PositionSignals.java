package io.tidemark.sync.internal.engine;

import io.tidemark.sync.ObjectReport;
import io.tidemark.sync.Outcome;
import io.tidemark.sync.TrackedObject;
import io.tidemark.sync.spi.SyncListener;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.time.Duration;
import java.time.Instant;
import java.util.Map;
import java.util.Optional;
import java.util.OptionalLong;
import java.util.concurrent.ConcurrentHashMap;

/**
 * After each cycle, tells the listeners where the object stands ({@link SyncListener#onPosition}): its watermark,
 * how many versions it lags behind the provider's current version where the provider can tell, and when its
 * watermark last moved. Costs nothing without listeners. The provider's current version (a query on SQL Server)
 * is read at most once per {@link #LAG_REFRESH} per object, not per cycle: an idle object polled every second must
 * not double its round trips for a gauge.
 */
final class PositionSignals {

    private static final Logger LOG = LoggerFactory.getLogger(PositionSignals.class);

    static final Duration LAG_REFRESH = Duration.ofSeconds(10);

    private final EngineConfig config;
    private final Map<String, Instant> lastMoves = new ConcurrentHashMap<>();
    private final Map<String, CurrentVersion> currentVersions = new ConcurrentHashMap<>();

    private record CurrentVersion(OptionalLong version, Instant readAt) {
    }

    PositionSignals(EngineConfig config) {
        this.config = config;
    }

    /** {@code storedLastMove}: when the store says the watermark last moved, as read at the cycle's start. */
    void observe(TrackedObject object, ObjectReport report, Optional<Instant> storedLastMove) {
        if (config.listeners().isEmpty() || report.outcome() == Outcome.PAUSED) {
            return;
        }
        Instant end = config.clock().instant(); // the cycle just ended, on the clock stored times use
        boolean moved = report.toVersion().isPresent() && !report.toVersion().equals(report.fromVersion());
        Instant lastMove = moved ? end : storedLastMove.orElse(lastMoves.get(object.name()));
        if (lastMove != null) {
            lastMoves.put(object.name(), lastMove);
        }
        OptionalLong behind = OptionalLong.empty();
        OptionalLong current = currentVersion(object, end);
        if (current.isPresent() && report.toVersion().isPresent()) {
            behind = OptionalLong.of(Math.max(0, current.getAsLong() - report.toVersion().getAsLong()));
        }
        for (SyncListener listener : config.listeners()) {
            try {
                listener.onPosition(object.name(), report.toVersion(), behind, Optional.ofNullable(lastMove));
            } catch (RuntimeException e) {
                LOG.warn("[{}] a listener failed on a position: {}", object.name(), e.toString());
            }
        }
    }

    private OptionalLong currentVersion(TrackedObject object, Instant now) {
        CurrentVersion known = currentVersions.get(object.name());
        if (known != null && Duration.between(known.readAt(), now).compareTo(LAG_REFRESH) < 0) {
            return known.version();
        }
        OptionalLong version;
        try {
            version = config.provider().currentVersion(object);
        } catch (RuntimeException e) {
            LOG.debug("[{}] the provider's current version could not be read: {}", object.name(), e.toString());
            version = OptionalLong.empty();
        }
        currentVersions.put(object.name(), new CurrentVersion(version, now));
        return version;
    }
}
