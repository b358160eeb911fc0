package io.tidemark.destinations.webhook.internal;

import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.util.zip.GZIPOutputStream;

/** The request body for {@code Content-Encoding: gzip}. */
public final class Gzip {

    private Gzip() {
    }

    public static byte[] compress(byte[] body) {
        // JSON of changes compresses to well under a quarter; the buffer grows if it does not.
        ByteArrayOutputStream out = new ByteArrayOutputStream(Math.max(64, body.length / 4));
        try (GZIPOutputStream gzip = new GZIPOutputStream(out, 8192)) {
            gzip.write(body);
        } catch (IOException e) {
            throw new UncheckedIOException("gzip into memory cannot fail", e);
        }
        return out.toByteArray();
    }
}
