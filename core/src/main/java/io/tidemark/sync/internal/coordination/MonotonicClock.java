package io.tidemark.sync.internal.coordination;

import java.time.Clock;
import java.time.Instant;
import java.time.ZoneId;
import java.time.ZoneOffset;

/**
 * A clock that only moves forward at the rate of {@link System#nanoTime()}: a lease deadline measured with it is
 * not moved by a change of the host's wall clock (NTP step, manual change).
 */
public final class MonotonicClock extends Clock {

    private final Instant origin = Instant.now();
    private final long originNanos = System.nanoTime();

    @Override
    public ZoneId getZone() {
        return ZoneOffset.UTC;
    }

    @Override
    public Clock withZone(ZoneId zone) {
        throw new UnsupportedOperationException("a monotonic clock has no zone to change");
    }

    @Override
    public Instant instant() {
        return origin.plusNanos(System.nanoTime() - originNanos);
    }
}
