package io.tidemark.testing.internal;

import io.tidemark.sync.spi.ResponsePayload;

/**
 * What the verifier reads: a change function called over SQL, or a {@code ChangeProvider} called as the engine calls
 * it. Each call is one read, in a transaction of its own.
 */
public interface ContractTarget extends AutoCloseable {

    /** How the verifier names it in reports: the function, or the provider's object. */
    String name();

    /**
     * One read. {@code json} is the request as the contract writes it ({@code {"fromVersion":..,"mode":..}});
     * {@code fromVersion} and {@code maxRows} (null for none) are its values, for a target that takes them as such.
     *
     * @throws ContractClient.Violation when the call fails or returns nothing
     */
    ResponsePayload call(String json, boolean seed, long fromVersion, Integer maxRows);

    @Override
    void close();
}
