package io.tidemark.sync.internal.engine;

import io.tidemark.sync.DeliveryPolicy;
import io.tidemark.sync.ErrorCode;
import io.tidemark.sync.TidemarkException;
import io.tidemark.sync.spi.Destination;

import java.util.Objects;

/** A destination with the name it was registered under and its failure policy. */
public final class NamedDestination {

    private final String name;
    private final Destination destination;
    private final DeliveryPolicy policy;

    public NamedDestination(String name, Destination destination, DeliveryPolicy policy) {
        if (name == null || name.isBlank()) {
            throw new TidemarkException(ErrorCode.INVALID_CONFIGURATION, "A destination needs a non-blank name");
        }
        if (destination == null) {
            throw new TidemarkException(ErrorCode.INVALID_CONFIGURATION, "Destination '" + name + "' is null");
        }
        if (policy == null) {
            throw new TidemarkException(ErrorCode.INVALID_CONFIGURATION, "Destination '" + name + "' needs a delivery policy");
        }
        this.name = name;
        this.destination = destination;
        this.policy = policy;
    }

    public String name() {
        return name;
    }

    public Destination destination() {
        return destination;
    }

    public DeliveryPolicy policy() {
        return Objects.requireNonNull(policy);
    }
}
