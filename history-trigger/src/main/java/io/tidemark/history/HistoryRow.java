package io.tidemark.history;

import io.tidemark.sync.Operation;

import java.time.Instant;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;

/**
 * One row of a history table: one version of one row of the table, or a tombstone.
 *
 * <p>Immutable. {@link #values()} holds the versioned columns in table order, as JDBC reads them (json and other
 * driver objects as text, arrays as {@code Object[]}, times as {@code java.time} values).
 */
public final class HistoryRow {

    private final long historyId;
    private final Operation operation;
    private final Instant validFrom;
    private final Instant validTo;
    private final Map<String, Object> values;
    private final List<Object> key;
    private final ChangeContext context;

    public HistoryRow(long historyId, Operation operation, Instant validFrom, Instant validTo,
                      Map<String, Object> values, List<Object> key, ChangeContext context) {
        this.historyId = historyId;
        this.operation = Objects.requireNonNull(operation, "operation");
        this.validFrom = Objects.requireNonNull(validFrom, "validFrom");
        this.validTo = validTo;
        this.values = Collections.unmodifiableMap(new LinkedHashMap<>(values));
        this.key = Collections.unmodifiableList(new java.util.ArrayList<>(key));
        this.context = Objects.requireNonNull(context, "context");
    }

    public long historyId() {
        return historyId;
    }

    /** INSERT (the first version of a key), UPDATE (a later version) or DELETE (a tombstone). */
    public Operation operation() {
        return operation;
    }

    public Instant validFrom() {
        return validFrom;
    }

    /** The end of the period; empty while the version is open ({@code valid_to = 'infinity'}). */
    public Optional<Instant> validTo() {
        return Optional.ofNullable(validTo);
    }

    public boolean isOpen() {
        return validTo == null;
    }

    /** A tombstone: the last values of a deleted row, with an empty period at the instant of the delete. */
    public boolean isTombstone() {
        return operation == Operation.DELETE;
    }

    /** The versioned columns, in table order. Values may be null. */
    public Map<String, Object> values() {
        return values;
    }

    /** One versioned column's value (null when NULL). */
    public Object value(String column) {
        if (!values.containsKey(column)) {
            throw new IllegalArgumentException("No versioned column " + column + "; columns are " + values.keySet());
        }
        return values.get(column);
    }

    /** The primary-key values, in key order. */
    public List<Object> key() {
        return key;
    }

    /** Who changed it and why; empty values where the writer pushed no context. */
    public ChangeContext context() {
        return context;
    }

    @Override
    public String toString() {
        return "HistoryRow[" + historyId + " " + operation + " " + key + " [" + validFrom + ", "
                + (validTo == null ? "infinity" : validTo) + ") " + values + " " + context + "]";
    }
}
