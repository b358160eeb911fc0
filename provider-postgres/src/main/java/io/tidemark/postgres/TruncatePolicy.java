package io.tidemark.postgres;

/**
 * What the outbox does when the tracked table is truncated. A {@code TRUNCATE} fires no DELETE trigger, so it
 * has to be handled on purpose: it is never silently lost.
 */
public enum TruncatePolicy {

    /**
     * The truncate fails with an error that says what to do instead ({@code DELETE}, or re-installing the
     * outbox with {@link #RECORD_DELETES}). The default: a truncate stays as fast as the DBA expects, or
     * does not happen.
     */
    REFUSE,

    /**
     * Before the table is emptied, every row's key is recorded as a delete, in the truncating transaction.
     * Consumers see one delete per row; the truncate costs as much as reading the whole table.
     */
    RECORD_DELETES
}
