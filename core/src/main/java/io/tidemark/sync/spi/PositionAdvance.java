package io.tidemark.sync.spi;

import java.util.Objects;
import java.util.OptionalLong;

/**
 * One destination's position move within {@link WatermarkStore#advance(String, String, OptionalLong, long,
 * java.util.List, java.time.Instant)}: compare-and-set like the watermark itself.
 *
 * @param destination the destination's name
 * @param expected    the position the store must still hold (empty: none stored yet)
 * @param version     the new position; never lower than {@code expected}
 */
public record PositionAdvance(String destination, OptionalLong expected, long version) {

    public PositionAdvance {
        Objects.requireNonNull(destination, "destination");
        Objects.requireNonNull(expected, "expected");
    }
}
