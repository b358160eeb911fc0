package io.tidemark.sync.internal.payload;

import com.fasterxml.jackson.core.JsonFactory;
import com.fasterxml.jackson.core.JsonParser;
import io.tidemark.sync.spi.ResponsePayload;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.util.Objects;

/** UTF-8 bytes as the driver returned them; parsed in place, never copied. */
public final class ByteArrayPayload implements ResponsePayload {

    /** Enough bytes to hold any {@code n} characters of UTF-8 (4 bytes at most per code point). */
    private static final int MAX_BYTES_PER_CHAR = 4;

    private final byte[] bytes;

    public ByteArrayPayload(byte[] bytes) {
        this.bytes = Objects.requireNonNull(bytes, "bytes");
    }

    /** The bytes themselves, so that the delivering pass can cut elements out of them without copying all. */
    public byte[] bytes() {
        return bytes;
    }

    @Override
    public JsonParser openParser(JsonFactory factory) throws IOException {
        return factory.createParser(bytes);
    }

    @Override
    public boolean isBlank() {
        for (byte b : bytes) {
            if (b != ' ' && b != '\t' && b != '\n' && b != '\r') {
                return false;
            }
        }
        return true;
    }

    @Override
    public long size() {
        return bytes.length;
    }

    @Override
    public String sizeUnit() {
        return "bytes";
    }

    @Override
    public String head(int maxChars) {
        int len = (int) Math.min(bytes.length, (long) maxChars * MAX_BYTES_PER_CHAR);
        // Step back to the start of a code point so the cut does not produce a replacement character.
        while (len < bytes.length && len > 0 && isContinuation(bytes[len])) {
            len--;
        }
        String text = new String(bytes, 0, len, StandardCharsets.UTF_8);
        return text.length() <= maxChars ? text : text.substring(0, maxChars);
    }

    @Override
    public String tail(int maxChars) {
        int start = (int) Math.max(0L, bytes.length - (long) maxChars * MAX_BYTES_PER_CHAR);
        while (start < bytes.length && isContinuation(bytes[start])) {
            start++;
        }
        String text = new String(bytes, start, bytes.length - start, StandardCharsets.UTF_8);
        return text.length() <= maxChars ? text : text.substring(text.length() - maxChars);
    }

    private static boolean isContinuation(byte b) {
        return (b & 0xC0) == 0x80;
    }

    @Override
    public void close() {
        // Nothing to release: the array belongs to the garbage collector.
    }
}
