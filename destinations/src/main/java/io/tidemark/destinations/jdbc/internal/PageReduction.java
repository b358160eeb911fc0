package io.tidemark.destinations.jdbc.internal;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.NullNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.tidemark.sync.Change;
import io.tidemark.sync.Operation;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * Folds a page's changes into one {@link RowOp} per key, so that the page can be applied as a few JDBC batches
 * (deletes, then one upsert batch per statement shape) instead of one round trip per change, with the same result
 * as applying the changes one by one in order: a later change to a key overrides an earlier one column by column,
 * a delete discards what came before it, and an insert after a delete writes a fresh row.
 *
 * <p>Which columns a change writes: those it carries a value for (a JSON {@code null} writes NULL), and for an
 * update with {@code $changed}, those listed there (listed without a value: NULL); a column the change does not
 * carry is left alone, so an existing row keeps its value and a new row gets the column's default. A row that
 * only saw updates carrying some of the columns is written with a plain UPDATE (a row the table does not have
 * stays missing: it cannot be made from some of its columns). Keys are compared as JSON values, exactly.
 */
final class PageReduction {

    private final List<Column> columns;
    private final int keyCount;
    private final Map<List<JsonNode>, RowOp> rows = new LinkedHashMap<>();

    PageReduction(TableMapping mapping) {
        this.columns = mapping.columns();
        this.keyCount = mapping.keyCount();
    }

    /** Folds {@code change} in; throws {@link MissingKeyException} when it lacks a key column. */
    void add(Change change) {
        ObjectNode fields = change.fields();
        JsonNode[] key = new JsonNode[keyCount];
        for (int i = 0; i < keyCount; i++) {
            JsonNode value = fields.get(columns.get(i).field());
            if (value == null || value.isNull()) {
                throw new MissingKeyException(columns.get(i).field(), change);
            }
            key[i] = value;
        }
        List<JsonNode> keyList = Arrays.asList(key);
        RowOp row = rows.get(keyList);
        Operation operation = change.operation().orElse(Operation.INSERT);
        if (row == null) {
            row = new RowOp(key, columns.size());
            rows.put(keyList, row);
        }
        if (operation != Operation.UPDATE) {
            row.updateOnly = false;
        }
        if (operation == Operation.DELETE) {
            row.delete = true;
            row.write = false;
            row.clearValues();
            return;
        }
        row.write = true;
        for (int i = keyCount; i < columns.size(); i++) {
            String field = columns.get(i).field();
            switch (change.columnState(field)) {
                case SET -> row.values[i] = fields.get(field);
                case CLEARED -> row.values[i] = NullNode.getInstance();
                default -> {
                    // UNCHANGED or ABSENT: this change leaves the column as it is.
                }
            }
        }
    }

    /** The keys to delete first (deletes, and deletes followed by an insert). */
    List<RowOp> deletes() {
        List<RowOp> out = new ArrayList<>();
        for (RowOp row : rows.values()) {
            if (row.delete) {
                out.add(row);
            }
        }
        return out;
    }

    /** The rows to upsert, grouped by statement shape ({@link RowOp#mask()}), in first-seen order. */
    Map<String, List<RowOp>> upsertsByShape() {
        return byShape(false);
    }

    /** The rows to update (updates only, not every column), grouped by shape, in first-seen order. */
    Map<String, List<RowOp>> updatesByShape() {
        return byShape(true);
    }

    private Map<String, List<RowOp>> byShape(boolean plainUpdates) {
        Map<String, List<RowOp>> out = new LinkedHashMap<>();
        for (RowOp row : rows.values()) {
            if (row.write && row.isPlainUpdate() == plainUpdates) {
                out.computeIfAbsent(row.mask(), m -> new ArrayList<>()).add(row);
            }
        }
        return out;
    }

    /** A change without a value for a key column: it cannot be matched to a row. */
    static final class MissingKeyException extends RuntimeException {
        private static final long serialVersionUID = 1L;

        MissingKeyException(String field, Change change) {
            super("a change has no value for the key field \"" + field + "\"" + change.version()
                    .stream().mapToObj(v -> " ($version " + v + ")").findFirst().orElse(""));
        }
    }
}
