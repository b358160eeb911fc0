package io.tidemark.destinations.jdbc.internal;

import com.fasterxml.jackson.databind.JsonNode;

/**
 * What a page does to one row, once every change of the page to that key is folded into it: delete the row,
 * write (upsert) some of its columns, or both (delete first, then write: the page deleted the row and inserted it
 * again, so columns the insert does not carry must not survive from the old row).
 */
final class RowOp {

    /** One slot per mapped column ({@link TableMapping#columns()} order); null where the page carries no value. */
    final JsonNode[] values;
    boolean delete;
    boolean write;
    /**
     * Whether every write folded in was an update (no insert, no delete before it): such a row is written with a
     * plain UPDATE unless it carries every column, since an INSERT of some columns only could break a NOT NULL
     * column the change did not touch (PostgreSQL checks the proposed row before it finds the conflict).
     */
    boolean updateOnly = true;

    final int keyCount;

    /** A row of {@code columns} mapped columns whose first {@code key.length} are the key, set from {@code key}. */
    RowOp(JsonNode[] key, int columns) {
        this.values = new JsonNode[columns];
        this.keyCount = key.length;
        System.arraycopy(key, 0, values, 0, key.length);
    }

    /** Forgets the values written so far; the key stays. */
    void clearValues() {
        java.util.Arrays.fill(values, keyCount, values.length, null);
    }

    /** Which columns the write sets, as a string of 0 and 1 (one per mapped column). */
    String mask() {
        char[] mask = new char[values.length];
        for (int i = 0; i < values.length; i++) {
            mask[i] = values[i] == null ? '0' : '1';
        }
        return new String(mask);
    }

    /** Whether the row is written with a plain UPDATE: updates only, and not every column. */
    boolean isPlainUpdate() {
        if (!updateOnly) {
            return false;
        }
        for (JsonNode value : values) {
            if (value == null) {
                return true;
            }
        }
        return false;
    }
}
