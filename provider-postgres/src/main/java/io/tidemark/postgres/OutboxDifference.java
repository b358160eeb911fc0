package io.tidemark.postgres;

import java.util.Objects;

/**
 * One difference between the outbox installed in a database and what a {@link PostgresOutbox} configuration
 * generates: an option ({@code "payload keys"}, {@code "change function"}, ...) or a generated object
 * ({@code "trigger items_outbox_insert on public.items"}), with its installed and its requested value.
 *
 * @see PostgresOutbox#differences(javax.sql.DataSource)
 */
public final class OutboxDifference {

    private final String option;
    private final String installed;
    private final String requested;

    /**
     * @param option    what differs
     * @param installed its value in the database
     * @param requested its value in the configuration
     */
    public OutboxDifference(String option, String installed, String requested) {
        this.option = Objects.requireNonNull(option, "option");
        this.installed = Objects.requireNonNull(installed, "installed");
        this.requested = Objects.requireNonNull(requested, "requested");
    }

    /** What differs: an option of the configuration, or a generated object. */
    public String option() {
        return option;
    }

    /** What the database holds. */
    public String installed() {
        return installed;
    }

    /** What this configuration generates. */
    public String requested() {
        return requested;
    }

    @Override
    public boolean equals(Object o) {
        return o instanceof OutboxDifference d && d.option.equals(option) && d.installed.equals(installed)
                && d.requested.equals(requested);
    }

    @Override
    public int hashCode() {
        return Objects.hash(option, installed, requested);
    }

    /** {@code option: installed X, requested Y}. */
    @Override
    public String toString() {
        return option + ": installed " + installed + ", requested " + requested;
    }
}
