package io.tidemark.sync.spi;

import io.tidemark.sync.ErrorCode;
import io.tidemark.sync.TidemarkException;

import java.time.Duration;
import java.util.Optional;

/**
 * How a {@link Destination} says why it refused a page, so the engine knows whether trying again can help.
 *
 * <p>{@link #retryable} failures (a timeout, a 503, a lost connection) are retried under the destination's
 * {@link io.tidemark.sync.DeliveryPolicy}, after at least {@link #retryAfter()} when the destination was told how
 * long to wait (an HTTP {@code Retry-After}). {@link #fatal} failures (a 400, a rejected credential) skip the
 * remaining attempts: the policy's exhaustion rule applies at once. Any other exception a destination throws counts
 * as retryable.
 */
public final class DeliveryException extends TidemarkException {

    private static final long serialVersionUID = 1L;

    private final boolean retryable;
    private final transient Duration retryAfter;

    private DeliveryException(String message, Throwable cause, boolean retryable, Duration retryAfter) {
        super(ErrorCode.DESTINATION_FAILED, message, cause);
        this.retryable = retryable;
        this.retryAfter = retryAfter;
    }

    /** A failure that may pass if the same page is offered again. */
    public static DeliveryException retryable(String message, Throwable cause) {
        return new DeliveryException(message, cause, true, null);
    }

    /** A failure that may pass if the same page is offered again, but not before {@code retryAfter}. */
    public static DeliveryException retryableAfter(String message, Duration retryAfter) {
        if (retryAfter == null || retryAfter.isNegative()) {
            throw new IllegalArgumentException("retryAfter must be zero or positive, was " + retryAfter);
        }
        return new DeliveryException(message, null, true, retryAfter);
    }

    /** A failure that offering the same page again cannot cure. */
    public static DeliveryException fatal(String message, Throwable cause) {
        return new DeliveryException(message, cause, false, null);
    }

    public boolean isRetryable() {
        return retryable;
    }

    /** The earliest time to try again, when the destination was told one. */
    public Optional<Duration> retryAfter() {
        return Optional.ofNullable(retryAfter);
    }
}
