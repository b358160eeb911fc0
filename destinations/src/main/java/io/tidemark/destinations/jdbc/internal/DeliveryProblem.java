package io.tidemark.destinations.jdbc.internal;

/**
 * A page that cannot be applied for a reason offering it again cannot cure (a change without a key, a FULL page
 * whose predecessors were not applied, a table without a mapped column): the destination reports it as fatal.
 */
public final class DeliveryProblem extends RuntimeException {

    private static final long serialVersionUID = 1L;

    public DeliveryProblem(String message) {
        super(message);
    }
}
