package io.tidemark.kafka.connect.internal;

import com.fasterxml.jackson.core.JsonGenerator;
import com.fasterxml.jackson.core.JsonParser;
import com.fasterxml.jackson.core.JsonToken;
import com.fasterxml.jackson.core.io.JsonStringEncoder;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.tidemark.sync.Change;
import io.tidemark.sync.ErrorCode;
import io.tidemark.sync.TidemarkException;

import java.io.IOException;
import java.io.StringWriter;
import java.io.UncheckedIOException;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;

/**
 * The record key of a change: its key columns as a compact JSON object, in the configured order.
 *
 * <p>Read straight from the change's bytes with a streaming parser: building the tree of all the change's columns
 * to take one or two of them was the costliest part of mapping a record. The stream covers the usual keys
 * (strings, integers, booleans, null) and writes them as the tree would; anything else (a decimal, an object or
 * array, a column the change lacks, a key column named like the contract's {@code $} keys) takes the tree, so the
 * key's text never depends on which way it was read.
 *
 * <p>Not thread-safe: one per object of a task.
 */
final class RecordKeys {

    private static final ObjectMapper JSON = new ObjectMapper();
    private static final JsonStringEncoder ESCAPES = JsonStringEncoder.getInstance();

    private final String objectName;
    private final List<String> columns;
    /** Each column's {@code "name":}, escaped once. */
    private final List<String> prefixes;
    private final boolean streamable;
    private final StringBuilder text = new StringBuilder(64);

    RecordKeys(String objectName, List<String> columns) {
        this.objectName = objectName;
        this.columns = List.copyOf(columns);
        List<String> prefixes = new ArrayList<>(columns.size());
        for (String column : columns) {
            StringBuilder prefix = new StringBuilder().append('"');
            ESCAPES.quoteAsString(column, prefix);
            prefixes.add(prefix.append("\":").toString());
        }
        this.prefixes = List.copyOf(prefixes);
        // The tree leaves out $operation, $version and $changed; a key named like one of them goes that way too.
        this.streamable = columns.stream().noneMatch(c -> c.startsWith("$"))
                && columns.stream().distinct().count() == columns.size();
    }

    /** The key of {@code change}; fails naming the object and the column when the change lacks one. */
    String of(Change change) {
        if (streamable) {
            String key = streamed(change.rawUtf8());
            if (key != null) {
                return key;
            }
        }
        return fromTree(change);
    }

    /** The key read as a stream, or null when the change needs the tree. */
    String streamed(byte[] raw) {
        String[] values = new String[columns.size()];
        try (JsonParser p = JSON.getFactory().createParser(raw)) {
            if (p.nextToken() != JsonToken.START_OBJECT) {
                return null;
            }
            while (p.nextToken() == JsonToken.FIELD_NAME) {
                int index = columns.indexOf(p.currentName());
                JsonToken token = p.nextToken();
                if (index < 0) {
                    p.skipChildren();
                    continue;
                }
                String value = scalar(p, token);
                if (value == null) {
                    return null;
                }
                values[index] = value;     // a repeated column: the last one counts, as in the tree
            }
        } catch (IOException e) {
            return null;                   // beyond a single value's read limits, say: the tree reads it
        }
        text.setLength(0);
        text.append('{');
        for (int i = 0; i < values.length; i++) {
            if (values[i] == null) {
                return null;
            }
            if (i > 0) {
                text.append(',');
            }
            text.append(prefixes.get(i)).append(values[i]);
        }
        return text.append('}').toString();
    }

    /** A value's JSON text as Jackson writes its tree node; null for the kinds left to the tree. */
    private String scalar(JsonParser p, JsonToken token) throws IOException {
        switch (token) {
            case VALUE_STRING: {
                StringBuilder quoted = new StringBuilder(p.getTextLength() + 2).append('"');
                ESCAPES.quoteAsString(p.getText(), quoted);
                return quoted.append('"').toString();
            }
            case VALUE_NUMBER_INT:
                switch (p.getNumberType()) {
                    case INT:
                        return Integer.toString(p.getIntValue());
                    case LONG:
                        return Long.toString(p.getLongValue());
                    default:
                        return p.getBigIntegerValue().toString();
                }
            case VALUE_TRUE:
                return "true";
            case VALUE_FALSE:
                return "false";
            case VALUE_NULL:
                return "null";
            default:
                return null;
        }
    }

    /** The key from the change's parsed columns: every kind of value, and the error for a missing column. */
    String fromTree(Change change) {
        StringWriter out = new StringWriter(64);
        try (JsonGenerator g = JSON.getFactory().createGenerator(out)) {
            g.writeStartObject();
            for (String column : columns) {
                Optional<JsonNode> field = change.field(column);
                if (field.isEmpty()) {
                    throw TidemarkException.forObject(ErrorCode.INVALID_CONFIGURATION, objectName,
                            "a change (version " + change.version() + ") has no key column '" + column
                                    + "'; object." + objectName + ".key must name JSON keys every"
                                    + " change carries, deletes included. Keys of the change: " + names(change));
                }
                g.writeFieldName(column);
                g.writeTree(field.get());
            }
            g.writeEndObject();
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
        return out.toString();
    }

    private static List<String> names(Change change) {
        List<String> names = new ArrayList<>();
        change.fields().fieldNames().forEachRemaining(names::add);
        return names;
    }
}
