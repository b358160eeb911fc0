package io.tidemark.destinations.files.internal;

import com.fasterxml.jackson.core.JsonGenerator;
import io.tidemark.sync.Change;
import io.tidemark.sync.ChangeBatch;
import io.tidemark.sync.Envelope;
import io.tidemark.sync.internal.Json;

import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;

/**
 * Turns a page into JSON lines, one per change: the envelope's fields ({@link Envelope#writeFields}) and the change
 * under {@code "change"}, exactly as the procedure returned it:
 *
 * <pre>{@code {"object":"Items","idempotencyKey":"tm1-...",...,"totalChanges":2500,"change":{"$operation":"I",...}}}</pre>
 *
 * <p>The envelope's fields are the same on every line of a page, so they are written once per page and every line
 * is that prefix, the change's bytes and {@code }\n}: nothing is parsed or re-encoded. A raw line break inside a
 * change can only be JSON whitespace (one inside a string is escaped), so it is written as a space and every line
 * stays one line.
 */
public final class LineEncoder {

    private static final byte[] CHANGE_FIELD = ",\"change\":".getBytes(StandardCharsets.US_ASCII);
    private static final byte[] SUFFIX = "}\n".getBytes(StandardCharsets.US_ASCII);

    private final byte[] prefix;

    private LineEncoder(byte[] prefix) {
        this.prefix = prefix;
    }

    /** The encoder of {@code batch}'s lines. */
    public static LineEncoder of(ChangeBatch batch) {
        ByteArrayOutputStream out = new ByteArrayOutputStream(320);
        try (JsonGenerator g = Json.FACTORY.createGenerator(out)) {
            // The object stays open: the change's bytes and its closing brace follow outside the generator.
            g.disable(JsonGenerator.Feature.AUTO_CLOSE_JSON_CONTENT);
            g.writeStartObject();
            Envelope.writeFields(batch, g);
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
        out.writeBytes(CHANGE_FIELD);
        return new LineEncoder(out.toByteArray());
    }

    /** The line of {@code change}, with its end of line. */
    public byte[] line(Change change) {
        byte[] raw = change.rawUtf8();
        byte[] line = new byte[prefix.length + raw.length + SUFFIX.length];
        System.arraycopy(prefix, 0, line, 0, prefix.length);
        int at = prefix.length;
        for (byte b : raw) {
            line[at++] = b == '\n' || b == '\r' ? (byte) ' ' : b;
        }
        System.arraycopy(SUFFIX, 0, line, at, SUFFIX.length);
        return line;
    }
}
