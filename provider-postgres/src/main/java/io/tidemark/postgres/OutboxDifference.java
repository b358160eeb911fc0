package io.tidemark.postgres;

import java.util.Objects;

/**
 * One difference between the outbox installed in a database and what a {@link PostgresOutbox} configuration
 * generates: an option ({@code "payload keys"}, {@code "change function"}, ...) or a generated object
 * ({@code "trigger items_outbox_insert on public.items"}), with its installed and its requested value.
 *
 * @param option    what differs: an option of the configuration, or a generated object
 * @param installed what the database holds
 * @param requested what this configuration generates
 * @see PostgresOutbox#differences(javax.sql.DataSource)
 */
public record OutboxDifference(String option, String installed, String requested) {

    public OutboxDifference {
        Objects.requireNonNull(option, "option");
        Objects.requireNonNull(installed, "installed");
        Objects.requireNonNull(requested, "requested");
    }

    /** {@code option: installed X, requested Y}. */
    @Override
    public String toString() {
        return option + ": installed " + installed + ", requested " + requested;
    }
}
