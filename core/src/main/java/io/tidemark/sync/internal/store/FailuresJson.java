package io.tidemark.sync.internal.store;

import com.fasterxml.jackson.core.JsonGenerator;
import com.fasterxml.jackson.core.JsonParser;
import com.fasterxml.jackson.core.JsonToken;
import io.tidemark.sync.internal.Json;
import io.tidemark.sync.spi.DeadLetter;

import java.io.IOException;
import java.io.StringWriter;
import java.io.UncheckedIOException;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;

/** A letter's failures as the table stores them: {@code [{"at":"2026-01-01T00:00:00Z","error":"..."}, ...]}. */
public final class FailuresJson {

    private FailuresJson() {
    }

    public static String write(List<DeadLetter.Failure> failures) {
        StringWriter out = new StringWriter(64 + failures.size() * 128);
        try (JsonGenerator g = Json.FACTORY.createGenerator(out)) {
            g.writeStartArray();
            for (DeadLetter.Failure failure : failures) {
                g.writeStartObject();
                g.writeStringField("at", failure.at().toString());
                g.writeStringField("error", failure.error());
                g.writeEndObject();
            }
            g.writeEndArray();
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
        return out.toString();
    }

    /** Reads what {@link #write} wrote; unknown fields are skipped, so a later layout can add some. */
    public static List<DeadLetter.Failure> read(String json) {
        List<DeadLetter.Failure> failures = new ArrayList<>();
        try (JsonParser p = Json.FACTORY.createParser(json)) {
            expect(p.nextToken(), JsonToken.START_ARRAY);
            while (p.nextToken() == JsonToken.START_OBJECT) {
                String at = null;
                String error = null;
                while (p.nextToken() == JsonToken.FIELD_NAME) {
                    String field = p.currentName();
                    p.nextToken();
                    switch (field) {
                        case "at" -> at = p.getValueAsString();
                        case "error" -> error = p.getValueAsString();
                        default -> p.skipChildren();
                    }
                }
                if (at == null || error == null) {
                    throw new IllegalStateException("a stored failure lacks \"at\" or \"error\": " + json);
                }
                failures.add(new DeadLetter.Failure(Instant.parse(at), error));
            }
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
        return failures;
    }

    private static void expect(JsonToken actual, JsonToken expected) {
        if (actual != expected) {
            throw new IllegalStateException("stored failures are not a JSON array (found " + actual + ")");
        }
    }
}
