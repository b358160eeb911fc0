package io.tidemark.sync.internal.payload;

import com.fasterxml.jackson.core.JsonFactory;
import com.fasterxml.jackson.core.JsonParser;
import io.tidemark.sync.spi.ResponsePayload;

import java.io.IOException;
import java.util.Objects;

/** A response the driver handed over as a {@code String}. */
public final class StringPayload implements ResponsePayload {

    private final String text;

    public StringPayload(String text) {
        this.text = Objects.requireNonNull(text, "text");
    }

    @Override
    public JsonParser openParser(JsonFactory factory) throws IOException {
        return factory.createParser(text);
    }

    @Override
    public boolean isBlank() {
        return text.isBlank();
    }

    @Override
    public long size() {
        return text.length();
    }

    @Override
    public String sizeUnit() {
        return "characters";
    }

    @Override
    public String head(int maxChars) {
        return text.substring(0, Math.min(maxChars, text.length()));
    }

    @Override
    public String tail(int maxChars) {
        return text.substring(Math.max(0, text.length() - maxChars));
    }

    @Override
    public void close() {
        // Nothing to release.
    }
}
