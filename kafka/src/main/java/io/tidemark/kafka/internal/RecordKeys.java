package io.tidemark.kafka.internal;

import com.fasterxml.jackson.core.JsonGenerator;
import com.fasterxml.jackson.databind.JsonNode;
import io.tidemark.sync.Change;
import io.tidemark.sync.ChangeBatch;
import io.tidemark.sync.internal.Json;
import io.tidemark.sync.spi.DeliveryException;

import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.util.List;
import java.util.Map;
import java.util.Optional;

/**
 * The record key of a change: its key columns as one compact JSON object, in the configured order, each value as
 * the change carries it ({@code {"id":42}}, {@code {"region":"EU","code":"A-100"}}). The same row gives the same
 * bytes every time, so Kafka's partitioner puts every change of one row into one partition, in order.
 */
public final class RecordKeys {

    private final List<String> defaultColumns;
    private final Map<String, List<String>> columnsByObject;

    public RecordKeys(List<String> defaultColumns, Map<String, List<String>> columnsByObject) {
        this.defaultColumns = List.copyOf(defaultColumns);
        this.columnsByObject = Map.copyOf(columnsByObject);
    }

    /** The key columns of {@code object}: its own when configured, else the default. */
    public List<String> columnsOf(String object) {
        return columnsByObject.getOrDefault(object, defaultColumns);
    }

    /** The key of change {@code index} of {@code batch}; fatal when the change lacks a key column. */
    public byte[] keyOf(ChangeBatch batch, int index, List<String> columns) {
        Change change = batch.changes().get(index);
        ByteArrayOutputStream out = new ByteArrayOutputStream(32);
        try (JsonGenerator g = Json.FACTORY.createGenerator(out)) {
            g.setCodec(Json.MAPPER);
            g.writeStartObject();
            for (String column : columns) {
                Optional<JsonNode> value = change.field(column);
                if (value.isEmpty()) {
                    throw missing(batch, index, column);
                }
                g.writeFieldName(column);
                g.writeTree(value.get());
            }
            g.writeEndObject();
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
        return out.toByteArray();
    }

    private static DeliveryException missing(ChangeBatch batch, int index, String column) {
        Change change = batch.changes().get(index);
        String version = change.version().isPresent() ? ", version " + change.version().getAsLong() : "";
        // The same change comes back on every attempt: only a change to the procedure or the key columns helps.
        return DeliveryException.fatal("change " + (index + 1) + " of page " + batch.pageNumber() + "/"
                + batch.pageCount() + " of object '" + batch.objectName() + "'" + version + " has no field '"
                + column + "', a key column of its record key: return it from the procedure or configure the"
                + " object's key columns", null);
    }
}
