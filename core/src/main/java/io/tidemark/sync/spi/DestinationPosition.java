package io.tidemark.sync.spi;

import java.util.Objects;
import java.util.OptionalLong;

/**
 * Where one destination of a tracked object stands: every change up to {@link #version()} was accepted by it,
 * and whether it is paused. Kept by the {@link WatermarkStore} next to the object's watermark, which is the lowest
 * position of the object's destinations.
 *
 * @param objectName  the tracked object
 * @param destination the destination's name as registered with the engine
 * @param version     the position; null when none is stored yet (a destination paused before it received
 *                    anything, or one waiting for its own full export)
 * @param paused      whether the destination is paused for this object
 */
public record DestinationPosition(String objectName, String destination, Long version, boolean paused) {

    public DestinationPosition {
        Objects.requireNonNull(objectName, "objectName");
        Objects.requireNonNull(destination, "destination");
    }

    /** The stored position; empty when none is stored yet. */
    public OptionalLong position() {
        return version == null ? OptionalLong.empty() : OptionalLong.of(version);
    }
}
