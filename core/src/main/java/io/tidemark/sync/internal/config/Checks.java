package io.tidemark.sync.internal.config;

import io.tidemark.sync.ErrorCode;
import io.tidemark.sync.TidemarkException;

import java.time.Duration;
import java.util.ArrayList;
import java.util.Collection;
import java.util.List;
import java.util.function.Supplier;

/**
 * Collects what is wrong with a builder's configuration, so that {@code build()} validates every rule in one
 * place and reports every violation at once, as one {@link ErrorCode#INVALID_CONFIGURATION} error naming the
 * builder. Setters only store; a null given to a setter is reported here, not thrown there.
 *
 * <pre>{@code
 * Checks checks = Checks.of("PostgresProvider");
 * checks.commandTimeout("commandTimeout", commandTimeout);
 * checks.notNull("clock", clock);
 * checks.throwIfAny();
 * }</pre>
 */
public final class Checks {

    private final String builder;
    private final List<String> violations = new ArrayList<>();

    private Checks(String builder) {
        this.builder = builder;
    }

    /** Checks for the named builder or configured object (the name starts the error message). */
    public static Checks of(String builder) {
        return new Checks(builder);
    }

    /**
     * Records a violation, worded for the user: what is wrong with which property and, ideally, what to do. The
     * same violation found by two rules is listed once.
     */
    public Checks add(String violation) {
        if (!violations.contains(violation)) {
            violations.add(violation);
        }
        return this;
    }

    /** Records {@code violation} unless {@code ok}. */
    public Checks that(boolean ok, String violation) {
        if (!ok) {
            add(violation);
        }
        return this;
    }

    /** True (and nothing recorded) when {@code value} is not null. */
    public boolean notNull(String property, Object value) {
        if (value == null) {
            add(property + " must not be null");
            return false;
        }
        return true;
    }

    /** A list property: not null, and no null element. */
    public boolean noNulls(String property, Collection<?> values) {
        if (!notNull(property, values)) {
            return false;
        }
        if (values.stream().anyMatch(v -> v == null)) {
            add(property + " must not contain null");
            return false;
        }
        return true;
    }

    public Checks notBlank(String property, String value) {
        return that(value != null && !value.isBlank(), property + " must not be blank, got "
                + (value == null ? "null" : "'" + value + "'"));
    }

    public Checks positive(String property, Duration value) {
        return that(value != null && !value.isNegative() && !value.isZero(),
                property + " must be a positive duration, got " + value);
    }

    public Checks notNegative(String property, Duration value) {
        return that(value != null && !value.isNegative(), property + " must be zero or positive, got " + value);
    }

    public Checks atLeast(String property, long value, long least) {
        return that(value >= least, property + " must be at least " + least + ", got " + value);
    }

    /**
     * A command timeout: whole seconds, at least one, and no more than JDBC's {@code setQueryTimeout} can take
     * ({@link Integer#MAX_VALUE} seconds).
     */
    public Checks commandTimeout(String property, Duration value) {
        boolean ok = value != null && !value.isNegative() && value.getSeconds() >= 1
                && value.getSeconds() <= Integer.MAX_VALUE;
        return that(ok, property + " must be at least one second and at most " + Integer.MAX_VALUE
                + " seconds, got " + value);
    }

    /**
     * Runs a check that throws (an identifier check such as {@code PgName.checkPart}) and records its message
     * instead; returns the check's result, or null when it failed.
     */
    public <T> T valid(Supplier<T> check) {
        try {
            return check.get();
        } catch (TidemarkException e) {
            add(e.getMessage());
            return null;
        }
    }

    /** The same for a check without a result. */
    public Checks valid(Runnable check) {
        try {
            check.run();
        } catch (TidemarkException e) {
            add(e.getMessage());
        }
        return this;
    }

    public List<String> violations() {
        return List.copyOf(violations);
    }

    /**
     * Throws one {@link ErrorCode#INVALID_CONFIGURATION} error listing every violation, one per line; returns
     * quietly when there is none.
     */
    public void throwIfAny() {
        if (violations.isEmpty()) {
            return;
        }
        if (violations.size() == 1) {
            throw new TidemarkException(ErrorCode.INVALID_CONFIGURATION, builder + ": " + violations.get(0));
        }
        StringBuilder message = new StringBuilder(builder).append(" has ").append(violations.size())
                .append(" configuration problems:");
        violations.forEach(v -> message.append("\n  - ").append(v));
        throw new TidemarkException(ErrorCode.INVALID_CONFIGURATION, message.toString());
    }
}
