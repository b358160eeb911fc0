package io.tidemark.sync;

import com.fasterxml.jackson.core.JsonGenerator;
import io.tidemark.sync.internal.Json;

import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.OutputStream;
import java.io.UncheckedIOException;
import java.util.List;

/**
 * The JSON form of a page, the same for every destination that serialises one (docs/contract.md, "The envelope"):
 *
 * <pre>{@code
 * {"object":"Items","idempotencyKey":"tm1-...","batchId":"Items:10-20","fromVersion":10,"toVersion":20,
 *  "syncType":"DIFF","reasonCode":0,"page":1,"pageCount":3,"totalChanges":2500,
 *  "changes":[ ...each change exactly as the procedure returned it... ]}
 * }</pre>
 *
 * <p>Changes are copied as the bytes the procedure returned ({@link Change#rawUtf8()}); nothing is parsed again,
 * decoded or re-encoded.
 */
public final class Envelope {

    private static final byte[] CLOSE = {']', '}'};

    private Envelope() {
    }

    /** Writes the page's envelope to {@code out} (not closed). */
    public static void write(ChangeBatch batch, OutputStream out) throws IOException {
        try (JsonGenerator g = Json.FACTORY.createGenerator(out)) {
            // The generator writes the fields and opens the array; the changes' bytes go to the stream as they are.
            g.disable(JsonGenerator.Feature.AUTO_CLOSE_TARGET);
            g.disable(JsonGenerator.Feature.AUTO_CLOSE_JSON_CONTENT);
            g.writeStartObject();
            writeFields(batch, g);
            g.writeArrayFieldStart("changes");
        }
        List<Change> changes = batch.changes();
        for (int i = 0; i < changes.size(); i++) {
            if (i > 0) {
                out.write(',');
            }
            out.write(changes.get(i).rawUtf8());
        }
        out.write(CLOSE);
    }

    /** The page's envelope as UTF-8 bytes. */
    public static byte[] toBytes(ChangeBatch batch) {
        ByteArrayOutputStream out = new ByteArrayOutputStream(256 + batch.changes().size() * 160);
        try {
            write(batch, out);
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
        return out.toByteArray();
    }

    /**
     * Writes the envelope's fields (everything but {@code changes}) into an object the caller opened; for forms
     * that carry them on every change, such as one JSON line per change.
     */
    public static void writeFields(ChangeBatch batch, JsonGenerator g) throws IOException {
        try {
            fields(batch, new JsonFields(g));
        } catch (UncheckedIOException e) {
            throw e.getCause();
        }
    }

    /**
     * Hands the envelope's fields (everything but {@code changes}) to {@code sink}, in the envelope's order, under
     * the envelope's names: the one list of them, for forms other than JSON (record headers, for example).
     */
    public static void fields(ChangeBatch batch, FieldSink sink) {
        sink.text("object", batch.objectName());
        sink.text("idempotencyKey", batch.idempotencyKey());
        sink.text("batchId", batch.batchId());
        sink.number("fromVersion", batch.fromVersion());
        sink.number("toVersion", batch.toVersion());
        sink.text("syncType", batch.syncType().name());
        sink.number("reasonCode", batch.reasonCode());
        sink.number("page", batch.pageNumber());
        sink.number("pageCount", batch.pageCount());
        sink.number("totalChanges", batch.totalChanges());
    }

    /** Receives the envelope's fields from {@link #fields(ChangeBatch, FieldSink)}, each with its JSON type. */
    public interface FieldSink {
        void text(String name, String value);

        void number(String name, long value);

        void number(String name, int value);
    }

    /** The fields as JSON fields of an object the caller opened. */
    private record JsonFields(JsonGenerator g) implements FieldSink {

        @Override
        public void text(String name, String value) {
            try {
                g.writeStringField(name, value);
            } catch (IOException e) {
                throw new UncheckedIOException(e);
            }
        }

        @Override
        public void number(String name, long value) {
            try {
                g.writeNumberField(name, value);
            } catch (IOException e) {
                throw new UncheckedIOException(e);
            }
        }

        @Override
        public void number(String name, int value) {
            try {
                g.writeNumberField(name, value);
            } catch (IOException e) {
                throw new UncheckedIOException(e);
            }
        }
    }
}
