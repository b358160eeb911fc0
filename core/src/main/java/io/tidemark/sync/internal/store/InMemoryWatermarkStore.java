package io.tidemark.sync.internal.store;

import io.tidemark.sync.spi.WatermarkState;
import io.tidemark.sync.spi.WatermarkStore;

import java.time.Instant;
import java.util.Map;
import java.util.Optional;
import java.util.OptionalLong;
import java.util.TreeMap;
import java.util.concurrent.ConcurrentHashMap;

/** A {@link WatermarkStore} in a map; each update is atomic per object. */
public final class InMemoryWatermarkStore implements WatermarkStore {

    private final ConcurrentHashMap<String, WatermarkState> states = new ConcurrentHashMap<>();

    @Override
    public Optional<WatermarkState> load(String objectName) {
        return Optional.ofNullable(states.get(objectName));
    }

    @Override
    public Map<String, WatermarkState> loadAll() {
        return new TreeMap<>(states);
    }

    @Override
    public void advance(String objectName, OptionalLong expected, long newVersion, Instant at) {
        WatermarkConflicts.checkNotBackwards(objectName, expected, newVersion);
        states.compute(objectName, (name, current) -> {
            OptionalLong stored = current == null ? OptionalLong.empty() : current.version();
            if (!stored.equals(expected)) {
                throw WatermarkConflicts.explain(name, expected, newVersion, Optional.ofNullable(current));
            }
            boolean moved = stored.isEmpty() || stored.getAsLong() != newVersion;
            Instant lastMoved = moved ? at : current.lastMovedAt().orElse(null);
            boolean paused = current != null && current.paused();
            return new WatermarkState(name, newVersion, paused, lastMoved, at, null);
        });
    }

    @Override
    public void recordPoll(String objectName, Instant at, String error) {
        states.compute(objectName, (name, current) -> current == null
                ? new WatermarkState(name, null, false, null, at, error)
                : new WatermarkState(name, boxed(current.version()), current.paused(),
                        current.lastMovedAt().orElse(null), at, error));
    }

    @Override
    public void setPaused(String objectName, boolean paused, Instant at) {
        states.compute(objectName, (name, current) -> current == null
                ? new WatermarkState(name, null, paused, null, null, null)
                : new WatermarkState(name, boxed(current.version()), paused, current.lastMovedAt().orElse(null),
                        current.lastPolledAt().orElse(null), current.lastError().orElse(null)));
    }

    @Override
    public void reset(String objectName, Instant at) {
        states.computeIfPresent(objectName, (name, current) -> new WatermarkState(name, null, current.paused(),
                at, current.lastPolledAt().orElse(null), null));
    }

    private static Long boxed(OptionalLong version) {
        return version.isPresent() ? version.getAsLong() : null;
    }
}
