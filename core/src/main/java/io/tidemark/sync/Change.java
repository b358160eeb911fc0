package io.tidemark.sync;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.tidemark.sync.internal.Json;
import io.tidemark.sync.internal.contract.ChangeFields;

import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.Objects;
import java.util.Optional;
import java.util.OptionalLong;

/**
 * One element of a response's {@code Data} array.
 *
 * <p>The contract's own keys are lifted out: {@code $operation} becomes {@link #operation()}, {@code $version}
 * {@link #version()} and {@code $changed} {@link #changedColumns()}. Everything else is the procedure's own
 * columns, in {@link #fields()}.
 *
 * <p><b>Reading a column-level change.</b> When the procedure sends {@code $changed}, a name in it with a
 * matching key carries the new value, a name in it without a key (or with a JSON {@code null}) was cleared to
 * NULL, and a name in neither place did not change: see {@link #columnState(String)}.
 *
 * <p>A change keeps the element's JSON as the procedure returned it ({@link #rawJson()}) and decodes
 * {@link #fields()} from it on first use, so a destination that forwards raw JSON never pays for a tree.
 * A change is shared by every destination of its batch: treat {@link #fields()} as read-only.
 */
public final class Change {

    private final Operation operation;
    private final Long version;
    private final List<String> changedColumns;
    private volatile byte[] rawUtf8;
    private volatile ObjectNode fields;

    private Change(Operation operation, Long version, List<String> changedColumns, byte[] rawUtf8, ObjectNode fields) {
        this.operation = operation;
        this.version = version;
        this.changedColumns = changedColumns == null ? null : List.copyOf(changedColumns);
        this.rawUtf8 = rawUtf8;
        this.fields = fields;
    }

    /** A change built from its parts, for tests and for code that produces changes itself. */
    public static Change of(Operation operation, Long version, List<String> changedColumns, ObjectNode fields) {
        return new Change(operation, version, changedColumns, null, Objects.requireNonNull(fields, "fields"));
    }

    /**
     * A change read from a response: {@code rawUtf8} is the element's JSON object (contract keys included),
     * and the contract keys were already read from it. Used by the engine.
     */
    public static Change fromRaw(Operation operation, Long version, List<String> changedColumns, byte[] rawUtf8) {
        return new Change(operation, version, changedColumns, Objects.requireNonNull(rawUtf8, "rawUtf8"), null);
    }

    /** {@code $operation}; empty when the row carried none (for example rows of a full export). */
    public Optional<Operation> operation() {
        return Optional.ofNullable(operation);
    }

    /** {@code $version}; empty when the row carried none. */
    public OptionalLong version() {
        return version == null ? OptionalLong.empty() : OptionalLong.of(version);
    }

    /** {@code $changed}: the names of the columns an update touched, as they appear in the payload. */
    public Optional<List<String>> changedColumns() {
        return Optional.ofNullable(changedColumns);
    }

    /** The procedure's own columns, without the contract's {@code $} keys. Read-only by convention. */
    public ObjectNode fields() {
        ObjectNode result = fields;
        if (result == null) {
            result = ChangeFields.parse(rawUtf8);
            fields = result;
        }
        return result;
    }

    /** One column's value; empty when the key is absent. A JSON {@code null} is returned as a {@code NullNode}. */
    public Optional<JsonNode> field(String name) {
        return Optional.ofNullable(fields().get(name));
    }

    /** How one column was affected, read the way the contract's {@code $changed} rule defines. */
    public ColumnState columnState(String column) {
        JsonNode value = fields().get(column);
        if (changedColumns == null || operation != Operation.UPDATE) {
            if (value == null) {
                return ColumnState.ABSENT;
            }
            return value.isNull() ? ColumnState.CLEARED : ColumnState.SET;
        }
        if (!changedColumns.contains(column)) {
            return ColumnState.UNCHANGED;
        }
        return value == null || value.isNull() ? ColumnState.CLEARED : ColumnState.SET;
    }

    /** The element as the procedure returned it (for changes built with {@link #of}, written from the parts). */
    public String rawJson() {
        return new String(rawUtf8(), StandardCharsets.UTF_8);
    }

    /** {@link #rawJson()} as UTF-8 bytes, without decoding; for destinations that forward bytes. */
    public byte[] rawUtf8() {
        byte[] raw = rawUtf8;
        if (raw == null) {
            raw = Json.writeChange(this).getBytes(StandardCharsets.UTF_8);
            rawUtf8 = raw;
        }
        return raw;
    }

    @Override
    public String toString() {
        return rawJson();
    }

    /** What {@link #columnState(String)} reports. */
    public enum ColumnState {
        /** The row carries a value for the column (and, for an update with {@code $changed}, lists it). */
        SET,
        /** The column was set to NULL: listed in {@code $changed} without a value, or sent as JSON null. */
        CLEARED,
        /** An update with {@code $changed} that does not list the column: it did not change. */
        UNCHANGED,
        /** No {@code $changed} information and no key: nothing can be said. */
        ABSENT
    }
}
