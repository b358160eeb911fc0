package io.tidemark.sync.spi;

import java.time.Instant;
import java.util.Objects;
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

    public WatermarkState(String objectName, Long version, boolean paused, Instant lastMovedAt,
                          Instant lastPolledAt, String lastError) {
        this.objectName = Objects.requireNonNull(objectName, "objectName");
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

    /** When the version last changed. */
    public Optional<Instant> lastMovedAt() {
        return Optional.ofNullable(lastMovedAt);
    }

    /** When a cycle last ran for the object, successful or not. */
    public Optional<Instant> lastPolledAt() {
        return Optional.ofNullable(lastPolledAt);
    }

    /** The error of the last cycle; empty after a successful one. */
    public Optional<String> lastError() {
        return Optional.ofNullable(lastError);
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
                && Objects.equals(lastError, that.lastError);
    }

    @Override
    public int hashCode() {
        return Objects.hash(objectName, version, paused, lastMovedAt, lastPolledAt, lastError);
    }

    @Override
    public String toString() {
        return "WatermarkState[" + objectName + ", version=" + version + ", paused=" + paused
                + ", lastMovedAt=" + lastMovedAt + ", lastPolledAt=" + lastPolledAt + ", lastError=" + lastError + "]";
    }
}
