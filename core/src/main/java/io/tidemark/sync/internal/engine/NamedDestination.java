package io.tidemark.sync.internal.engine;

import io.tidemark.sync.DeliveryPolicy;
import io.tidemark.sync.internal.config.Checks;
import io.tidemark.sync.spi.Destination;

/**
 * A destination with the name it was registered under and its failure policy. The constructor only stores;
 * {@link #check} validates when the engine is built.
 */
public record NamedDestination(String name, Destination destination, DeliveryPolicy policy) {

    /** Records what is wrong with this destination. */
    void check(Checks checks) {
        if (name == null || name.isBlank()) {
            checks.add("A destination needs a non-blank name, got " + (name == null ? "null" : "'" + name + "'"));
        }
        checks.that(destination != null, "Destination '" + name + "' is null");
        checks.that(policy != null, "Destination '" + name + "' needs a delivery policy");
    }
}
