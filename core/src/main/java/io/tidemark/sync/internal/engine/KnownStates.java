package io.tidemark.sync.internal.engine;

import io.tidemark.sync.spi.DestinationPosition;
import io.tidemark.sync.spi.PositionAdvance;
import io.tidemark.sync.spi.WatermarkState;

import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.TreeMap;
import java.util.concurrent.ConcurrentHashMap;

/**
 * Each object's stored state as this engine last read it and then wrote it itself, so that a polled cycle can start
 * without reading the store: while changes flow, that read would otherwise run once per cycle, hundreds of times a
 * second, to find what this engine just wrote.
 *
 * <p>Nothing is lost by it: every write is still compare-and-set against the version this state holds, so a change
 * another writer made (a reset, another instance) fails the write and the next cycle reads the store. What the
 * store alone would tell (a pause, a resume or a reset made from outside the engine, with the {@code tidemark}
 * command say) is read at the latest {@link #REFRESH} after the last read. The engine's own pause, resume, reset and
 * adoption {@link #forget} the object, as does any cycle that did not end in success: the next cycle reads the
 * store. Engines with coordination always read (the lease, not this engine, decides who writes).
 *
 * <p>A cycle takes a {@link #generation} when it starts and records what it read and wrote under it; a
 * {@link #forget} in the meantime (a pause while the cycle ran) makes that record stale, so it is never used.
 */
final class KnownStates {

    /** How long a state read from the store is used, with this engine's own writes applied, before reading again. */
    static final Duration REFRESH = Duration.ofSeconds(1);

    private record Known(WatermarkState state, Instant readAt, long generation) {
    }

    private final Map<String, Known> known = new ConcurrentHashMap<>();
    private final Map<String, Long> generations = new ConcurrentHashMap<>();

    /** The object's generation now: pass it to what the cycle records. */
    long generation(String objectName) {
        return generations.getOrDefault(objectName, 0L);
    }

    /** The state to start a cycle from, if one read less than {@link #REFRESH} before {@code now} is known. */
    Optional<WatermarkState> fresh(String objectName, Instant now) {
        Known k = known.get(objectName);
        if (k == null || k.generation() != generation(objectName) || !now.isBefore(k.readAt().plus(REFRESH))) {
            return Optional.empty();
        }
        return Optional.of(k.state());
    }

    /** The store returned {@code state} at {@code at}. */
    void read(String objectName, WatermarkState state, Instant at, long generation) {
        known.put(objectName, new Known(state, at, generation));
    }

    /**
     * This engine stored {@code advances} and the watermark {@code watermark} for {@code source} at {@code at}, as
     * {@link io.tidemark.sync.spi.WatermarkStore#advance} does: the known state becomes what the store now holds.
     */
    void advanced(String objectName, String source, long watermark, List<PositionAdvance> advances, Instant at,
                  long generation) {
        known.computeIfPresent(objectName, (name, k) -> {
            if (k.generation() != generation) {
                return k;
            }
            WatermarkState before = k.state();
            Map<String, DestinationPosition> positions = new TreeMap<>(before.positions());
            for (PositionAdvance a : advances) {
                DestinationPosition held = positions.get(a.destination());
                positions.put(a.destination(), new DestinationPosition(name, a.destination(), a.version(),
                        held != null && held.paused()));
            }
            boolean moved = before.version().isEmpty() || before.version().getAsLong() != watermark;
            WatermarkState after = new WatermarkState(name, watermark, before.paused(),
                    moved ? at : before.lastMovedAt().orElse(null), at, null, source, positions);
            return new Known(after, k.readAt(), generation);
        });
    }

    /**
     * This engine cleared the row's error at {@code at} ({@link io.tidemark.sync.spi.WatermarkStore#recordPoll} with
     * no error): the known state holds no error either, so that the cycles reusing it do not clear it again.
     */
    void errorCleared(String objectName, Instant at, long generation) {
        known.computeIfPresent(objectName, (name, k) -> {
            if (k.generation() != generation) {
                return k;
            }
            WatermarkState s = k.state();
            WatermarkState after = new WatermarkState(name, s.version().isPresent() ? s.version().getAsLong() : null,
                    s.paused(), s.lastMovedAt().orElse(null), at, null, s.source().orElse(null), s.positions());
            return new Known(after, k.readAt(), generation);
        });
    }

    /** The engine's objects or destinations changed: every next cycle reads the store. */
    void forgetAll() {
        generations.keySet().forEach(this::forget);
        known.keySet().forEach(this::forget);
    }

    /** What this engine knew of the object may be wrong now: its next cycle reads the store. */
    void forget(String objectName) {
        generations.merge(objectName, 1L, Long::sum);
        known.remove(objectName);
    }
}
