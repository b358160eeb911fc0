package io.tidemark.sync.internal.engine;

import io.tidemark.sync.DestinationStart;
import io.tidemark.sync.spi.DestinationPosition;
import io.tidemark.sync.spi.PositionAdvance;
import io.tidemark.sync.spi.WatermarkState;

import java.util.ArrayList;
import java.util.Comparator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.OptionalLong;
import java.util.Set;

/**
 * Where each destination of one object stands at the start of a cycle, read from the stored state:
 * <ul>
 *   <li>a destination with a stored position stands there;</li>
 *   <li>an object whose watermark was stored before positions were kept (no position has a version): every
 *       destination stands at the watermark (the migration of such stores, written at its next delivery);</li>
 *   <li>a destination added to an object that delivers already starts as its {@link DestinationStart} says: at
 *       the most advanced destination's position, or with its own full export (no position); so does one whose
 *       stored position is behind the watermark (removed live, and the others moved on meanwhile);</li>
 *   <li>an object that never delivered: no destination has a position; its first cycle follows its InitialSync.</li>
 * </ul>
 * The object's watermark is the lowest position of its destinations, and never goes down.
 */
final class PositionPlan {

    /** One destination: where it stands, what the store holds for it (for compare-and-set), whether it is paused. */
    static final class Entry {
        final NamedDestination destination;
        /** Empty: it has no position yet and is called as on a first cycle. */
        OptionalLong position;
        /** What the store holds (empty when no version is stored): the expected value of its next write. */
        OptionalLong stored;
        final boolean paused;

        Entry(NamedDestination destination, OptionalLong position, OptionalLong stored, boolean paused) {
            this.destination = destination;
            this.position = position;
            this.stored = stored;
            this.paused = paused;
        }

        String name() {
            return destination.name();
        }
    }

    private final Map<String, Entry> entries = new LinkedHashMap<>();
    /**
     * The stored positions of destinations this instance does not deliver to but another live instance does
     * (coordination, configured differently for a while): they hold the watermark back like the others.
     */
    private final List<Long> heldElsewhere = new ArrayList<>();
    private OptionalLong watermark;

    private PositionPlan(OptionalLong watermark) {
        this.watermark = watermark;
    }

    static PositionPlan of(Optional<WatermarkState> state, List<NamedDestination> destinations) {
        return of(state, destinations, Set.of());
    }

    /**
     * As {@link #of(Optional, List)}; {@code liveDestinations} (with coordination) are the destinations of every live
     * instance: the stored position of one this instance does not have holds the watermark back, as long as it is
     * not behind it already (a position left behind is no one's any more: re-added, it starts as a new one).
     */
    static PositionPlan of(Optional<WatermarkState> state, List<NamedDestination> destinations,
                           Set<String> liveDestinations) {
        OptionalLong watermark = state.map(WatermarkState::version).orElse(OptionalLong.empty());
        Map<String, DestinationPosition> stored = state.map(WatermarkState::positions).orElse(Map.of());
        boolean positionsKept = stored.values().stream().anyMatch(p -> p.version() != null);
        OptionalLong mostAdvanced = destinations.stream()
                .map(d -> stored.get(d.name()))
                .filter(p -> p != null && p.version() != null)
                .mapToLong(DestinationPosition::version)
                .max();
        PositionPlan plan = new PositionPlan(watermark);
        for (NamedDestination d : destinations) {
            DestinationPosition p = stored.get(d.name());
            boolean paused = p != null && p.paused();
            OptionalLong own = p == null ? OptionalLong.empty() : p.position();
            OptionalLong position;
            // Behind the watermark: it was removed while the others moved on (their positions make the watermark),
            // and the changes in between may be trimmed; re-added, it starts as a newly added one.
            boolean leftBehind = own.isPresent() && positionsKept && watermark.isPresent()
                    && own.getAsLong() < watermark.getAsLong();
            if (own.isPresent() && !leftBehind) {
                position = own;
            } else if (!positionsKept) {
                position = watermark; // before positions were kept, or never delivered: all start together
            } else if (d.start() == DestinationStart.FULL_EXPORT) {
                position = OptionalLong.empty();
            } else {
                position = mostAdvanced.isPresent() ? mostAdvanced : watermark;
            }
            plan.entries.put(d.name(), new Entry(d, position, own, paused));
        }
        for (DestinationPosition p : stored.values()) {
            if (!plan.entries.containsKey(p.destination()) && liveDestinations.contains(p.destination())
                    && p.version() != null && (watermark.isEmpty() || p.version() >= watermark.getAsLong())) {
                plan.heldElsewhere.add(p.version());
            }
        }
        return plan;
    }

    OptionalLong watermark() {
        return watermark;
    }

    List<Entry> entries() {
        return List.copyOf(entries.values());
    }

    /** True when no destination has a position and nothing is stored: the object's very first cycle. */
    boolean firstCycle() {
        return watermark.isEmpty() && entries.values().stream().allMatch(e -> e.position.isEmpty());
    }

    /**
     * The destinations that take part in this cycle (not paused), grouped by position, most advanced first
     * (those are usually the healthy ones, which should not wait behind a lagging one); those without a position
     * (a full export of their own) last. One procedure call serves each group.
     */
    List<List<Entry>> groups() {
        Map<OptionalLong, List<Entry>> byPosition = new LinkedHashMap<>();
        entries.values().stream().filter(e -> !e.paused)
                .forEach(e -> byPosition.computeIfAbsent(e.position, k -> new ArrayList<>()).add(e));
        List<OptionalLong> keys = new ArrayList<>(byPosition.keySet());
        keys.sort(Comparator.comparingLong((OptionalLong v) -> v.isPresent() ? v.getAsLong() : Long.MIN_VALUE)
                .reversed());
        List<List<Entry>> groups = new ArrayList<>();
        keys.forEach(k -> groups.add(byPosition.get(k)));
        return groups;
    }

    /**
     * The writes that move {@code moved} to {@code version}. Every other destination that stands somewhere without
     * a stored position (migrated from a single watermark, or added at the current position) is written where it
     * stands in the same transaction: once some positions are stored, a destination without one would read as
     * newly added.
     */
    List<PositionAdvance> advances(List<Entry> moved, long version) {
        List<PositionAdvance> advances = new ArrayList<>(entries.size());
        for (Entry e : entries.values()) {
            if (moved.contains(e)) {
                advances.add(new PositionAdvance(e.name(), e.stored, version));
            } else if (e.position.isPresent() && !e.stored.equals(e.position)) {
                advances.add(new PositionAdvance(e.name(), e.stored, e.position.getAsLong()));
            }
        }
        return advances;
    }

    /**
     * The watermark once {@code moved} stand at {@code version}: the lowest position of every destination (paused
     * ones included: they catch up from theirs), never lower than the stored one.
     */
    long watermarkAfter(List<Entry> moved, long version) {
        long lowest = Long.MAX_VALUE;
        for (Entry e : entries.values()) {
            OptionalLong p = moved.contains(e) ? OptionalLong.of(version) : e.position;
            if (p.isPresent()) {
                lowest = Math.min(lowest, p.getAsLong());
            }
        }
        if (lowest == Long.MAX_VALUE) {
            lowest = version;
        }
        for (long elsewhere : heldElsewhere) {
            lowest = Math.min(lowest, elsewhere);
        }
        return watermark.isPresent() ? Math.max(watermark.getAsLong(), lowest) : lowest;
    }

    /** Records a successful write of {@link #advances}. */
    void moved(List<Entry> moved, long version, long newWatermark) {
        for (Entry e : moved) {
            e.position = OptionalLong.of(version);
        }
        for (Entry e : entries.values()) {
            e.stored = e.position;
        }
        watermark = OptionalLong.of(newWatermark);
    }
}
