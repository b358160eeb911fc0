package io.tidemark.sync.internal;

import com.fasterxml.jackson.core.JsonFactory;
import com.fasterxml.jackson.core.JsonGenerator;
import com.fasterxml.jackson.core.StreamReadConstraints;
import com.fasterxml.jackson.databind.DeserializationFeature;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.cfg.JsonNodeFeature;
import com.fasterxml.jackson.databind.json.JsonMapper;
import com.fasterxml.jackson.databind.node.JsonNodeFactory;
import io.tidemark.sync.Change;
import io.tidemark.sync.ErrorCode;
import io.tidemark.sync.TidemarkException;

import java.io.IOException;
import java.io.StringWriter;
import java.io.UncheckedIOException;
import java.util.List;
import java.util.Map;

/** The one Jackson setup the library uses; built once, shared, thread-safe. */
public final class Json {

    /**
     * Change sets are large by nature: lift Jackson's default document-size guards (which exist to stop
     * hostile input on web endpoints) for the parts that grow with the number of rows, keep them for single
     * values.
     */
    public static final JsonFactory FACTORY = JsonFactory.builder()
            .streamReadConstraints(StreamReadConstraints.builder()
                    .maxDocumentLength(-1L)
                    .maxStringLength(Integer.MAX_VALUE)
                    .maxNestingDepth(1_000)
                    .build())
            .build();

    /**
     * Decimal numbers are kept exact (BigDecimal, scale preserved, trailing zeros kept): money must not pass
     * through a double, and 12.50 stays 12.50.
     */
    public static final ObjectMapper MAPPER = JsonMapper.builder(FACTORY)
            .enable(DeserializationFeature.USE_BIG_DECIMAL_FOR_FLOATS)
            .disable(JsonNodeFeature.STRIP_TRAILING_BIGDECIMAL_ZEROES)
            .build();

    /** Builds nodes as they are read; the default factory keeps a BigDecimal as given. */
    public static final JsonNodeFactory NODES = JsonNodeFactory.instance;

    private Json() {
    }

    /** Writes a change back as one JSON object: the contract keys first, then the fields in order. */
    public static String writeChange(Change change) {
        StringWriter out = new StringWriter(256);
        try (JsonGenerator g = FACTORY.createGenerator(out)) {
            g.setCodec(MAPPER);
            g.writeStartObject();
            if (change.operation().isPresent()) {
                g.writeStringField("$operation", change.operation().get().code());
            }
            if (change.version().isPresent()) {
                g.writeNumberField("$version", change.version().getAsLong());
            }
            if (change.changedColumns().isPresent()) {
                List<String> changed = change.changedColumns().get();
                g.writeArrayFieldStart("$changed");
                for (String column : changed) {
                    g.writeString(column);
                }
                g.writeEndArray();
            }
            for (Map.Entry<String, JsonNode> field : change.fields().properties()) {
                g.writeFieldName(field.getKey());
                g.writeTree(field.getValue());
            }
            g.writeEndObject();
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
        return out.toString();
    }

    /** Serialises a node; for error messages and stored JSON. */
    public static String write(JsonNode node) {
        try {
            return MAPPER.writeValueAsString(node);
        } catch (IOException e) {
            throw new TidemarkException(ErrorCode.INTERNAL, "Could not write JSON", e);
        }
    }
}
