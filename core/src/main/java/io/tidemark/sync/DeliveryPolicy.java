package io.tidemark.sync;

import io.tidemark.sync.internal.config.Checks;

import java.time.Duration;

/**
 * What the engine does when a destination refuses a page.
 *
 * <p>The default, {@link #block()}, stops the cycle at the first refusal: the watermark stays, the failure is
 * reported (outcome {@link Outcome#BLOCKED}, the store's last error, the log), and the same changes are offered
 * again next cycle. Nothing is ever skipped.
 *
 * <p>{@link #deadLetterAfter(int, Duration)} is the explicit opt-out for destinations whose consumers would
 * rather lose time than stall: after the retries, the page goes to the engine's
 * {@link io.tidemark.sync.spi.DeadLetterStore} and delivery moves on. The watermark then moves past those
 * changes; they are kept only in the dead-letter store.
 */
public final class DeliveryPolicy {

    /** What happens once the attempts are used up. */
    public enum WhenExhausted {
        /** Stop the cycle; keep the watermark. */
        BLOCK,
        /** Store the page as a dead letter and carry on with the next page. */
        DEAD_LETTER
    }

    private static final DeliveryPolicy BLOCK = new DeliveryPolicy(1, Duration.ZERO, WhenExhausted.BLOCK);

    private final int maxAttempts;
    private final Duration backoff;
    private final WhenExhausted whenExhausted;

    /** Every factory validates here, reporting all problems in one error. */
    private DeliveryPolicy(int maxAttempts, Duration backoff, WhenExhausted whenExhausted) {
        Checks checks = Checks.of("DeliveryPolicy");
        checks.atLeast("maxAttempts", maxAttempts, 1);
        checks.notNegative("backoff", backoff);
        checks.throwIfAny();
        this.maxAttempts = maxAttempts;
        this.backoff = backoff;
        this.whenExhausted = whenExhausted;
    }

    /** One attempt per cycle; a refusal blocks the object until the destination accepts. The default. */
    public static DeliveryPolicy block() {
        return BLOCK;
    }

    /** Up to {@code maxAttempts} attempts within the cycle, waiting {@code backoff} (doubling) between them; then block. */
    public static DeliveryPolicy retryThenBlock(int maxAttempts, Duration backoff) {
        return new DeliveryPolicy(maxAttempts, backoff, WhenExhausted.BLOCK);
    }

    /** Up to {@code maxAttempts} attempts, then dead-letter the page and move on. Requires a dead-letter store. */
    public static DeliveryPolicy deadLetterAfter(int maxAttempts, Duration backoff) {
        return new DeliveryPolicy(maxAttempts, backoff, WhenExhausted.DEAD_LETTER);
    }

    public int maxAttempts() {
        return maxAttempts;
    }

    /** The wait before the second attempt; it doubles before each further one. */
    public Duration backoff() {
        return backoff;
    }

    public WhenExhausted whenExhausted() {
        return whenExhausted;
    }

    @Override
    public String toString() {
        return "DeliveryPolicy[" + maxAttempts + " attempts, backoff " + backoff + ", then " + whenExhausted + "]";
    }
}
