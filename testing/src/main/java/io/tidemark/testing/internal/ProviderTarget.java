package io.tidemark.testing.internal;

import io.tidemark.sync.TidemarkException;
import io.tidemark.sync.TrackedObject;
import io.tidemark.sync.spi.CallContext;
import io.tidemark.sync.spi.ChangeProvider;
import io.tidemark.sync.spi.ChangeRequest;
import io.tidemark.sync.spi.ResponsePayload;

import java.util.OptionalInt;

/**
 * A provider's object, read through {@link ChangeProvider#invoke} as the engine reads it. {@code beforeEachRead}
 * runs first: for a provider that learns of commits asynchronously (the log-based capture), it waits until the
 * provider has seen every commit made so far, so that the scenarios stay step by step, with no timing involved.
 */
public final class ProviderTarget implements ContractTarget {

    private final ChangeProvider provider;
    private final TrackedObject object;
    private final Runnable beforeEachRead;

    /** Validates the object with the provider, as the engine does when it is tracked. */
    public ProviderTarget(ChangeProvider provider, TrackedObject object, Runnable beforeEachRead) {
        this.provider = provider;
        this.object = object;
        this.beforeEachRead = beforeEachRead;
        provider.validate(object);
    }

    /** How reports name a provider's object. */
    public static String name(ChangeProvider provider, TrackedObject object) {
        return provider.name() + " " + object.name();
    }

    @Override
    public String name() {
        return name(provider, object);
    }

    @Override
    public ResponsePayload call(String json, boolean seed, long fromVersion, Integer maxRows) {
        try {
            beforeEachRead.run();
            ChangeRequest request = seed ? ChangeRequest.seed() : ChangeRequest.sync(fromVersion,
                    maxRows == null ? OptionalInt.empty() : OptionalInt.of(maxRows));
            return provider.invoke(object, request, CallContext.none());
        } catch (TidemarkException e) {
            throw new ContractClient.Violation("reading " + name() + " with " + json + " failed: " + e.getMessage());
        }
    }

    /** The provider is the caller's: it may be shared, so it stays open. */
    @Override
    public void close() {
    }
}
