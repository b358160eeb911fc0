package io.tidemark.sync.spi;

import com.fasterxml.jackson.core.JsonFactory;
import com.fasterxml.jackson.core.JsonParser;
import io.tidemark.sync.internal.payload.ByteArrayPayload;
import io.tidemark.sync.internal.payload.SpooledPayload;
import io.tidemark.sync.internal.payload.StringPayload;

import java.io.IOException;
import java.io.Reader;

/**
 * The text a change procedure returned, in a form the engine can read more than once without another call:
 * once to check the whole response against the contract, once to deliver it page by page. Nothing is delivered
 * until the first read found the response valid.
 *
 * <p>Providers create one with the factory that matches what their driver hands them, and must not keep
 * database resources open through it: by the time {@link ChangeProvider#invoke} returns, the payload stands
 * on its own.
 *
 * <ul>
 *   <li>{@link #ofUtf8(byte[])}: the driver already holds the value as UTF-8 bytes (PostgreSQL); no copy.</li>
 *   <li>{@link #ofString(String)}: the driver holds a {@code String}.</li>
 *   <li>{@link #spool(Reader)}: the value arrives as a stream (SQL Server's chunked {@code FOR JSON}); it is
 *       copied to a bounded in-memory buffer that overflows to a temporary file, so memory stays flat however
 *       large the response is.</li>
 * </ul>
 */
public interface ResponsePayload extends AutoCloseable {

    /** Wraps UTF-8 bytes without copying them. */
    static ResponsePayload ofUtf8(byte[] utf8) {
        return new ByteArrayPayload(utf8);
    }

    static ResponsePayload ofString(String json) {
        return new StringPayload(json);
    }

    /** Reads the stream to its end into a spool (memory first, then a temporary file) and closes it. */
    static ResponsePayload spool(Reader reader) throws IOException {
        return SpooledPayload.spool(reader);
    }

    /** Opens a fresh parser positioned before the first token. */
    JsonParser openParser(JsonFactory factory) throws IOException;

    /** True when the payload holds no non-whitespace character. */
    boolean isBlank();

    /** Size of the payload, in {@link #sizeUnit()}. */
    long size();

    /** {@code "bytes"} or {@code "characters"}. */
    String sizeUnit();

    /** Up to {@code maxChars} characters from the start, for error messages. */
    String head(int maxChars);

    /** Up to {@code maxChars} characters from the end, for error messages. */
    String tail(int maxChars);

    /** Releases what the payload holds (a temporary file, for a spool). */
    @Override
    void close();
}
