package io.tidemark.sync;

import java.time.Instant;
import java.util.Objects;
import java.util.Optional;
import java.util.OptionalLong;

/**
 * One destination of one tracked object, as {@link SyncEngine#status()} saw it: immutable.
 *
 * @param destination   the destination's name
 * @param position      the version it has accepted everything up to, as stored; empty before its first delivery
 * @param paused        paused with {@link SyncEngine#pause(String, String)}
 * @param blocked       the object's last cycle reported it {@link Outcome#BLOCKED}: it refused a page until its
 *                      policy ran out of attempts, or asked to be called later; its position stays
 * @param lastError     why it is blocked, from the last cycle; empty when it is not
 * @param lastDelivery  when this engine last saw it accept (or dead-letter) a page of the object; empty when it has
 *                      not since the engine was built
 */
public record DestinationStatus(String destination, OptionalLong position, boolean paused, boolean blocked,
                                Optional<String> lastError, Optional<Instant> lastDelivery) {

    public DestinationStatus {
        Objects.requireNonNull(destination, "destination");
        Objects.requireNonNull(position, "position");
        Objects.requireNonNull(lastError, "lastError");
        Objects.requireNonNull(lastDelivery, "lastDelivery");
    }
}
