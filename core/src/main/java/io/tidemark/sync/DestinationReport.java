package io.tidemark.sync;

import java.util.Objects;
import java.util.Optional;
import java.util.OptionalLong;

/**
 * What one cycle did for one destination of an object.
 *
 * @param destination       the destination's name
 * @param outcome           {@link Outcome#DELIVERED}, {@link Outcome#NO_CHANGES}, {@link Outcome#BLOCKED} (it refused
 *                          until its attempts ran out, or asked to be called later) or {@link Outcome#PAUSED}
 * @param fromVersion       its position before the cycle; empty when it had none (a first cycle, its own full export)
 * @param toVersion         its position after the cycle
 * @param pageCount         pages it accepted or dead-lettered in this cycle
 * @param deadLetteredPages pages set aside as dead letters for it in this cycle
 * @param error             why it is blocked
 */
public record DestinationReport(String destination, Outcome outcome, OptionalLong fromVersion,
                                OptionalLong toVersion, int pageCount, int deadLetteredPages,
                                Optional<TidemarkException> error) {

    public DestinationReport {
        Objects.requireNonNull(destination, "destination");
        Objects.requireNonNull(outcome, "outcome");
        Objects.requireNonNull(fromVersion, "fromVersion");
        Objects.requireNonNull(toVersion, "toVersion");
        Objects.requireNonNull(error, "error");
    }

    @Override
    public String toString() {
        return destination + " " + outcome + " " + describe(fromVersion) + " -> " + describe(toVersion)
                + error.map(e -> " (" + e.getMessage() + ")").orElse("");
    }

    private static String describe(OptionalLong v) {
        return v.isPresent() ? Long.toString(v.getAsLong()) : "none";
    }
}
