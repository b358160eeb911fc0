package io.tidemark.sync;

import io.tidemark.sync.internal.config.Checks;
import io.tidemark.sync.internal.config.Defaults;

import java.time.Duration;
import java.util.Objects;

/**
 * What the engine does when a destination refuses a page. Each destination has its own policy, and its own
 * position: a destination that refuses holds back only itself.
 *
 * <p>Attempts: up to {@link #maxAttempts()} within a cycle. Before attempt {@code n + 1} the engine waits a random
 * time between zero and {@code min(maxDelay, backoff * 2^(n-1))} ("full jitter": destinations refused together do
 * not retry together). A {@link io.tidemark.sync.spi.DeliveryException#retryableAfter Retry-After} from the
 * destination replaces that wait when it is within {@link #maxDelay()}; a longer one ends the cycle's attempts and
 * the page is offered again no earlier than that time. A {@link io.tidemark.sync.spi.DeliveryException#fatal fatal}
 * refusal skips the remaining attempts. Any other exception counts as retryable.
 *
 * <p>When the attempts run out, the default, {@link WhenExhausted#BLOCK}, keeps the destination's position: it is
 * reported blocked (outcome {@link Outcome#BLOCKED} when no destination of the object could move, the store's last
 * error, the log) and the same changes are offered to it again next cycle. Nothing is ever skipped. The other
 * destinations carry on.
 *
 * <p>{@link WhenExhausted#DEAD_LETTER} is the explicit opt-out for destinations whose consumers would rather lose
 * order than stall: the page goes to the engine's {@link io.tidemark.sync.spi.DeadLetterStore} and delivery to
 * that destination moves on, so its position moves past those changes; they are kept only in the dead-letter store.
 *
 * <pre>{@code
 * DeliveryPolicy.builder().maxAttempts(6).backoff(Duration.ofMillis(200)).maxDelay(Duration.ofSeconds(5)).build();
 * }</pre>
 */
public final class DeliveryPolicy {

    /** What happens once the attempts are used up. */
    public enum WhenExhausted {
        /** Keep the destination's position; offer the same changes again next cycle. */
        BLOCK,
        /** Store the page as a dead letter and carry on with the next page. */
        DEAD_LETTER
    }

    private static final DeliveryPolicy BLOCK = builder().build();

    private final int maxAttempts;
    private final Duration backoff;
    private final Duration maxDelay;
    private final WhenExhausted whenExhausted;

    private DeliveryPolicy(Builder b) {
        this.maxAttempts = b.maxAttempts;
        this.backoff = b.backoff;
        this.maxDelay = b.maxDelay;
        this.whenExhausted = b.whenExhausted;
    }

    public static Builder builder() {
        return new Builder();
    }

    /** One attempt per cycle; a refusal blocks the destination until it accepts. The default. */
    public static DeliveryPolicy block() {
        return BLOCK;
    }

    /** Up to {@code maxAttempts} attempts within the cycle, with jittered backoff from {@code backoff}; then block. */
    public static DeliveryPolicy retryThenBlock(int maxAttempts, Duration backoff) {
        return builder().maxAttempts(maxAttempts).backoff(backoff).build();
    }

    /** Up to {@code maxAttempts} attempts, then dead-letter the page and move on. Requires a dead-letter store. */
    public static DeliveryPolicy deadLetterAfter(int maxAttempts, Duration backoff) {
        return builder().maxAttempts(maxAttempts).backoff(backoff).whenExhausted(WhenExhausted.DEAD_LETTER).build();
    }

    public int maxAttempts() {
        return maxAttempts;
    }

    /** The base of the backoff: the longest wait before the second attempt; the bound doubles for each further one. */
    public Duration backoff() {
        return backoff;
    }

    /** The longest wait between two attempts, whatever the backoff or a Retry-After says. */
    public Duration maxDelay() {
        return maxDelay;
    }

    public WhenExhausted whenExhausted() {
        return whenExhausted;
    }

    /**
     * The bound of the wait after {@code failedAttempts} failed attempts: {@code min(maxDelay, backoff *
     * 2^(failedAttempts-1))}; the wait itself is drawn between zero and that bound.
     */
    public Duration delayBound(int failedAttempts) {
        if (failedAttempts < 1 || backoff.isZero()) {
            return Duration.ZERO;
        }
        int doublings = Math.min(failedAttempts - 1, 40);
        long nanos = backoff.toNanos();
        long bound = nanos > (Long.MAX_VALUE >> doublings) ? Long.MAX_VALUE : nanos << doublings;
        return bound >= maxDelay.toNanos() ? maxDelay : Duration.ofNanos(bound);
    }

    @Override
    public boolean equals(Object o) {
        return o instanceof DeliveryPolicy p && maxAttempts == p.maxAttempts && backoff.equals(p.backoff)
                && maxDelay.equals(p.maxDelay) && whenExhausted == p.whenExhausted;
    }

    @Override
    public int hashCode() {
        return Objects.hash(maxAttempts, backoff, maxDelay, whenExhausted);
    }

    @Override
    public String toString() {
        return "DeliveryPolicy[" + maxAttempts + " attempts, backoff " + backoff + " (jittered, at most " + maxDelay
                + "), then " + whenExhausted + "]";
    }

    /** Configures a {@link DeliveryPolicy}; {@link #build()} validates every setting at once. */
    public static final class Builder {
        private int maxAttempts = 1;
        private Duration backoff = Duration.ZERO;
        private Duration maxDelay = Defaults.MAX_DELIVERY_DELAY;
        private WhenExhausted whenExhausted = WhenExhausted.BLOCK;

        private Builder() {
        }

        /** Attempts per page and cycle, at least 1; default 1. */
        public Builder maxAttempts(int maxAttempts) {
            this.maxAttempts = maxAttempts;
            return this;
        }

        /** The base of the exponential backoff; default zero (retry at once). */
        public Builder backoff(Duration backoff) {
            this.backoff = backoff;
            return this;
        }

        /** The longest wait between two attempts; default 30 seconds. */
        public Builder maxDelay(Duration maxDelay) {
            this.maxDelay = maxDelay;
            return this;
        }

        /** What happens when the attempts run out; default {@link WhenExhausted#BLOCK}. */
        public Builder whenExhausted(WhenExhausted whenExhausted) {
            this.whenExhausted = whenExhausted;
            return this;
        }

        public DeliveryPolicy build() {
            Checks checks = Checks.of("DeliveryPolicy");
            checks.atLeast("maxAttempts", maxAttempts, 1);
            checks.notNegative("backoff", backoff);
            checks.notNegative("maxDelay", maxDelay);
            checks.notNull("whenExhausted", whenExhausted);
            checks.throwIfAny();
            return new DeliveryPolicy(this);
        }
    }
}
