package io.tidemark.sync;

import io.tidemark.sync.internal.store.WatermarkConflicts;
import io.tidemark.sync.spi.DestinationPosition;
import io.tidemark.sync.spi.PositionAdvance;
import io.tidemark.sync.spi.WatermarkState;
import io.tidemark.sync.spi.WatermarkStore;

import java.time.Instant;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.OptionalLong;
import java.util.TreeMap;
import java.util.concurrent.ConcurrentHashMap;

/**
 * Watermarks in memory, for tests and throw-away runs: lost when the JVM ends, so every object starts with a
 * first cycle again. {@link JdbcWatermarkStore} keeps them in the database. Each update is atomic per object:
 * the watermark and its destinations' positions change together or not at all.
 *
 * <pre>{@code
 * SyncEngine.builder().watermarks(InMemoryWatermarkStore.create())...
 * }</pre>
 */
public final class InMemoryWatermarkStore implements WatermarkStore {

    private final ConcurrentHashMap<String, WatermarkState> states = new ConcurrentHashMap<>();

    private InMemoryWatermarkStore() {
    }

    /** An empty store. */
    public static InMemoryWatermarkStore create() {
        return new InMemoryWatermarkStore();
    }

    @Override
    public Optional<WatermarkState> load(String objectName) {
        return Optional.ofNullable(states.get(objectName));
    }

    @Override
    public Map<String, WatermarkState> loadAll() {
        return new TreeMap<>(states);
    }

    @Override
    public void advance(String objectName, String source, OptionalLong expected, long newVersion,
                        List<PositionAdvance> positions, Instant at) {
        WatermarkConflicts.checkNotBackwards(objectName, expected, newVersion);
        WatermarkConflicts.requireSource(objectName, source);
        positions.forEach(p -> WatermarkConflicts.checkPositionNotBackwards(objectName, p));
        states.compute(objectName, (name, current) -> {
            OptionalLong stored = current == null ? OptionalLong.empty() : current.version();
            Optional<String> storedSource = current == null ? Optional.empty() : current.source();
            if (!stored.equals(expected) || storedSource.map(s -> !s.equals(source)).orElse(false)) {
                throw WatermarkConflicts.explain(name, source, expected, newVersion, Optional.ofNullable(current));
            }
            Map<String, DestinationPosition> moved = new TreeMap<>(current == null ? Map.of() : current.positions());
            for (PositionAdvance p : positions) {
                DestinationPosition was = moved.get(p.destination());
                OptionalLong held = was == null ? OptionalLong.empty() : was.position();
                if (!held.equals(p.expected())) {
                    throw WatermarkConflicts.positionConflict(name, p, held);
                }
                moved.put(p.destination(), new DestinationPosition(name, p.destination(), p.version(),
                        was != null && was.paused()));
            }
            boolean versionMoved = stored.isEmpty() || stored.getAsLong() != newVersion;
            Instant lastMoved = versionMoved ? at : current.lastMovedAt().orElse(null);
            boolean paused = current != null && current.paused();
            return new WatermarkState(name, newVersion, paused, lastMoved, at, null, source, moved);
        });
    }

    @Override
    public void setDestinationPaused(String objectName, String destination, boolean paused, Instant at) {
        states.compute(objectName, (name, current) -> {
            WatermarkState base = current != null ? current : new WatermarkState(name, null, false, null, null, null);
            Map<String, DestinationPosition> positions = new TreeMap<>(base.positions());
            DestinationPosition was = positions.get(destination);
            positions.put(destination, new DestinationPosition(name, destination, was == null ? null : was.version(),
                    paused));
            return base.withPositions(positions);
        });
    }

    @Override
    public void adoptSource(String objectName, String source, Instant at) {
        WatermarkConflicts.requireSource(objectName, source);
        states.computeIfPresent(objectName, (name, current) -> current.version().isEmpty() ? current
                : new WatermarkState(name, boxed(current.version()), current.paused(),
                        current.lastMovedAt().orElse(null), current.lastPolledAt().orElse(null),
                        current.lastError().orElse(null), source, current.positions()));
    }

    @Override
    public void recordPoll(String objectName, Instant at, String error) {
        states.compute(objectName, (name, current) -> current == null
                ? new WatermarkState(name, null, false, null, at, error)
                : new WatermarkState(name, boxed(current.version()), current.paused(),
                        current.lastMovedAt().orElse(null), at, error, current.source().orElse(null),
                        current.positions()));
    }

    @Override
    public void setPaused(String objectName, boolean paused, Instant at) {
        states.compute(objectName, (name, current) -> current == null
                ? new WatermarkState(name, null, paused, null, null, null)
                : new WatermarkState(name, boxed(current.version()), paused, current.lastMovedAt().orElse(null),
                        current.lastPolledAt().orElse(null), current.lastError().orElse(null),
                        current.source().orElse(null), current.positions()));
    }

    @Override
    public void reset(String objectName, Instant at) {
        states.computeIfPresent(objectName, (name, current) -> {
            Map<String, DestinationPosition> pausedOnly = new TreeMap<>();
            current.positions().values().stream().filter(DestinationPosition::paused).forEach(p ->
                    pausedOnly.put(p.destination(), new DestinationPosition(name, p.destination(), null, true)));
            return new WatermarkState(name, null, current.paused(), at, current.lastPolledAt().orElse(null), null,
                    null, pausedOnly);
        });
    }

    private static Long boxed(OptionalLong version) {
        return version.isPresent() ? version.getAsLong() : null;
    }
}
