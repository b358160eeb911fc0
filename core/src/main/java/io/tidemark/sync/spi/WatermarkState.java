package io.tidemark.sync.spi;

import java.time.Instant;
import java.util.Collections;
import java.util.Map;
import java.util.Objects;
import java.util.TreeMap;
import java.util.Optional;
import java.util.OptionalLong;

/** What a {@link WatermarkStore} keeps for one tracked object. */
public final class WatermarkState {

    private final String objectName;
    private final Long version;
    private final boolean paused;
    private final Instant lastMovedAt;
    private final Instant lastPolledAt;
    private final String lastError;
    private final String source;
    private final Map<String, DestinationPosition> positions;

    /** A state with no recorded source, as rows written before sources were stored. */
    public WatermarkState(String objectName, Long version, boolean paused, Instant lastMovedAt,
                          Instant lastPolledAt, String lastError) {
        this(objectName, version, paused, lastMovedAt, lastPolledAt, lastError, null);
    }

    public WatermarkState(String objectName, Long version, boolean paused, Instant lastMovedAt,
                          Instant lastPolledAt, String lastError, String source) {
        this(objectName, version, paused, lastMovedAt, lastPolledAt, lastError, source, Map.of());
    }

    /** A state with its destinations' positions, by destination name. */
    public WatermarkState(String objectName, Long version, boolean paused, Instant lastMovedAt,
                          Instant lastPolledAt, String lastError, String source,
                          Map<String, DestinationPosition> positions) {
        this.positions = Collections.unmodifiableMap(new TreeMap<>(Objects.requireNonNull(positions, "positions")));
        this.objectName = Objects.requireNonNull(objectName, "objectName");
        this.source = source;
        this.version = version;
        this.paused = paused;
        this.lastMovedAt = lastMovedAt;
        this.lastPolledAt = lastPolledAt;
        this.lastError = lastError;
    }

    public String objectName() {
        return objectName;
    }

    /** The stored watermark; empty until the first successful cycle. A stored 0 is a real watermark. */
    public OptionalLong version() {
        return version == null ? OptionalLong.empty() : OptionalLong.of(version);
    }

    public boolean paused() {
        return paused;
    }

    /** When the version last changed: it stands still while the object is idle, so it says how stale it is. */
    public Optional<Instant> lastMovedAt() {
        return Optional.ofNullable(lastMovedAt);
    }

    /**
     * When a cycle last ran for the object, as far as the store knows: it is written with a moved version or a
     * changed error, not at every poll ({@link io.tidemark.sync.SyncEngine#status} shows the engine's own, later
     * time).
     */
    public Optional<Instant> lastPolledAt() {
        return Optional.ofNullable(lastPolledAt);
    }

    /** The error of the last cycle; empty after a successful one. */
    public Optional<String> lastError() {
        return Optional.ofNullable(lastError);
    }

    /**
     * What produced the stored version: the provider's {@link ChangeProvider#sourceIdentity identity} of the
     * object's procedure when it was stored. Empty when no version is stored, and for a version written before
     * sources were recorded (such a row adopts the current source at its next successful cycle).
     */
    public Optional<String> source() {
        return Optional.ofNullable(source);
    }

    /**
     * The positions stored for the object's destinations, by name: where each one stands and whether it is paused.
     * Empty for an object whose watermark was stored before positions were kept (every destination then stands at
     * {@link #version()}) and for one that never delivered. The watermark is the lowest position of the
     * destinations the engine delivers to.
     */
    public Map<String, DestinationPosition> positions() {
        return positions;
    }

    /** A copy with {@code newPositions} in place of the positions. */
    public WatermarkState withPositions(Map<String, DestinationPosition> newPositions) {
        return new WatermarkState(objectName, version, paused, lastMovedAt, lastPolledAt, lastError, source,
                newPositions);
    }

    @Override
    public boolean equals(Object o) {
        if (this == o) {
            return true;
        }
        if (!(o instanceof WatermarkState)) {
            return false;
        }
        WatermarkState that = (WatermarkState) o;
        return paused == that.paused && objectName.equals(that.objectName) && Objects.equals(version, that.version)
                && Objects.equals(lastMovedAt, that.lastMovedAt) && Objects.equals(lastPolledAt, that.lastPolledAt)
                && Objects.equals(lastError, that.lastError) && Objects.equals(source, that.source)
                && positions.equals(that.positions);
    }

    @Override
    public int hashCode() {
        return Objects.hash(objectName, version, paused, lastMovedAt, lastPolledAt, lastError, source, positions);
    }

    @Override
    public String toString() {
        return "WatermarkState[" + objectName + ", version=" + version + ", paused=" + paused
                + ", source=" + source + ", lastMovedAt=" + lastMovedAt + ", lastPolledAt=" + lastPolledAt
                + ", lastError=" + lastError + (positions.isEmpty() ? "" : ", positions=" + positions.values()) + "]";
    }
}
