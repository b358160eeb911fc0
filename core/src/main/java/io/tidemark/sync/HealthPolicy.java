package io.tidemark.sync;

import io.tidemark.sync.internal.config.Checks;
import io.tidemark.sync.internal.config.Defaults;

import java.time.Duration;

/**
 * The thresholds of the engine's health rules ({@link SyncEngine#health()}; the rules are in the README's
 * "Monitoring" section). Immutable; {@link Builder#build()} validates.
 *
 * <pre>{@code
 * HealthPolicy.builder().failingCycles(5).failingFor(Duration.ofMinutes(10)).deadLetters(1, Duration.ofHours(24))
 *         .build();
 * }</pre>
 */
public final class HealthPolicy {

    private static final HealthPolicy DEFAULTS = builder().build();

    private final int failingCycles;
    private final Duration failingFor;
    private final int deadLetters;
    private final Duration deadLetterWindow;

    private HealthPolicy(Builder b) {
        this.failingCycles = b.failingCycles;
        this.failingFor = b.failingFor;
        this.deadLetters = b.deadLetters;
        this.deadLetterWindow = b.deadLetterWindow;
    }

    /** 3 failed cycles or 5 minutes of failing; 10 dead letters per destination and object within an hour. */
    public static HealthPolicy defaults() {
        return DEFAULTS;
    }

    public static Builder builder() {
        return new Builder();
    }

    /** Failed or blocked cycles in a row after which a failing object counts against the engine's health. */
    public int failingCycles() {
        return failingCycles;
    }

    /** How long an object may fail before it counts, however few attempts its backoff allowed. */
    public Duration failingFor() {
        return failingFor;
    }

    /** Dead letters of one destination of one object within {@link #deadLetterWindow()} that count. */
    public int deadLetters() {
        return deadLetters;
    }

    public Duration deadLetterWindow() {
        return deadLetterWindow;
    }

    @Override
    public String toString() {
        return "HealthPolicy[failingCycles=" + failingCycles + ", failingFor=" + failingFor + ", deadLetters="
                + deadLetters + " per " + deadLetterWindow + "]";
    }

    /** Setters only store; {@link #build()} checks every rule at once. */
    public static final class Builder {
        private int failingCycles = Defaults.HEALTH_FAILING_CYCLES;
        private Duration failingFor = Defaults.HEALTH_FAILING_FOR;
        private int deadLetters = Defaults.HEALTH_DEAD_LETTERS;
        private Duration deadLetterWindow = Defaults.HEALTH_DEAD_LETTER_WINDOW;

        private Builder() {
        }

        /** At least 1; 1 makes every failed cycle count at once. Default 3. */
        public Builder failingCycles(int cycles) {
            this.failingCycles = cycles;
            return this;
        }

        /** Positive. Default 5 minutes. */
        public Builder failingFor(Duration duration) {
            this.failingFor = duration;
            return this;
        }

        /** At least 1 letter, within a positive window of at most a day. Default 10 within an hour. */
        public Builder deadLetters(int count, Duration window) {
            this.deadLetters = count;
            this.deadLetterWindow = window;
            return this;
        }

        public HealthPolicy build() {
            Checks checks = Checks.of("HealthPolicy");
            checks.atLeast("failingCycles", failingCycles, 1);
            checks.positive("failingFor", failingFor);
            checks.atLeast("deadLetters", deadLetters, 1);
            checks.positive("deadLetterWindow", deadLetterWindow);
            if (deadLetterWindow != null) {
                checks.that(deadLetterWindow.compareTo(Duration.ofDays(1)) <= 0,
                        "deadLetterWindow must be at most a day (PT24H), got " + deadLetterWindow);
            }
            checks.throwIfAny();
            return new HealthPolicy(this);
        }
    }
}
