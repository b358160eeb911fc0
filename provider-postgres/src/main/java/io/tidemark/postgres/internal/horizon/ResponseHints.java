package io.tidemark.postgres.internal.horizon;

import com.fasterxml.jackson.core.JsonParser;
import com.fasterxml.jackson.core.JsonToken;
import io.tidemark.sync.internal.Json;

import java.io.IOException;
import java.util.Optional;

/**
 * Reads {@code Metadata.Outbox} ({@code {"Horizon": H, "HeldBack": true}}) from the start of a change function's
 * response, where the generated function puts it: committed changes waiting for an older transaction cost no extra
 * query to notice. Only a response whose first key is {@code Metadata} is looked at, and reading stops at its end,
 * so the cost does not grow with the response. Any function may send the same hint.
 */
public final class ResponseHints {


    /** The transaction horizon the function read, and whether committed changes sit at or above it. */
    public record Hint(long horizon, boolean heldBack) {
    }

    private ResponseHints() {
    }

    public static Optional<Hint> read(byte[] response) {
        if (response == null || response.length == 0) {
            return Optional.empty();
        }
        try (JsonParser p = Json.FACTORY.createParser(response)) {
            if (p.nextToken() != JsonToken.START_OBJECT || p.nextToken() != JsonToken.FIELD_NAME
                    || !"Metadata".equals(p.currentName()) || p.nextToken() != JsonToken.START_OBJECT) {
                return Optional.empty();
            }
            while (p.nextToken() == JsonToken.FIELD_NAME) {
                String key = p.currentName();
                JsonToken value = p.nextToken();
                if ("Outbox".equals(key) && value == JsonToken.START_OBJECT) {
                    return outbox(p);
                }
                p.skipChildren();
            }
            return Optional.empty();
        } catch (IOException e) {
            return Optional.empty(); // the engine reports malformed responses; this is only a hint
        }
    }

    private static Optional<Hint> outbox(JsonParser p) throws IOException {
        Long horizon = null;
        Boolean heldBack = null;
        while (p.nextToken() == JsonToken.FIELD_NAME) {
            String key = p.currentName();
            JsonToken value = p.nextToken();
            if ("Horizon".equals(key) && value == JsonToken.VALUE_NUMBER_INT) {
                horizon = p.getLongValue();
            } else if ("HeldBack".equals(key) && value.isBoolean()) {
                heldBack = p.getBooleanValue();
            } else {
                p.skipChildren();
            }
        }
        return horizon == null || heldBack == null ? Optional.empty() : Optional.of(new Hint(horizon, heldBack));
    }
}
