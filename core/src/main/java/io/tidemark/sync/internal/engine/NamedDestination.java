package io.tidemark.sync.internal.engine;

import io.tidemark.sync.DeliveryPolicy;
import io.tidemark.sync.DestinationStart;
import io.tidemark.sync.internal.config.Checks;
import io.tidemark.sync.spi.Destination;

/**
 * A destination with the name it was registered under, its failure policy and where it starts when added to an
 * object that already delivers. The constructor only stores; {@link #check} validates when the engine is built.
 */
public record NamedDestination(String name, Destination destination, DeliveryPolicy policy, DestinationStart start) {

    /** A destination that starts at the current position when added later. */
    public NamedDestination(String name, Destination destination, DeliveryPolicy policy) {
        this(name, destination, policy, DestinationStart.CURRENT_POSITION);
    }

    /** Records what is wrong with this destination. */
    void check(Checks checks) {
        if (name == null || name.isBlank()) {
            checks.add("A destination needs a non-blank name, got " + (name == null ? "null" : "'" + name + "'"));
        }
        checks.that(destination != null, "Destination '" + name + "' is null");
        checks.that(policy != null, "Destination '" + name + "' needs a delivery policy");
        checks.that(start != null, "Destination '" + name + "' needs a start (DestinationStart.CURRENT_POSITION or"
                + " FULL_EXPORT)");
    }
}
