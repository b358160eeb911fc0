package io.tidemark.sync.internal.deadletter;

import com.fasterxml.jackson.core.JsonParser;
import com.fasterxml.jackson.core.JsonToken;
import io.tidemark.sync.Change;
import io.tidemark.sync.ChangeBatch;
import io.tidemark.sync.ErrorCode;
import io.tidemark.sync.Operation;
import io.tidemark.sync.TidemarkException;
import io.tidemark.sync.internal.Json;
import io.tidemark.sync.spi.DeadLetter;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;

/**
 * Turns a letter's envelope back into the page it was: the same object, versions, page and page count (so the same
 * {@link ChangeBatch#idempotencyKey()}), and each change as the bytes the destination was first offered.
 */
final class EnvelopeReader {

    private EnvelopeReader() {
    }

    static ChangeBatch page(DeadLetter letter) {
        byte[] envelope = letter.envelope().getBytes(StandardCharsets.UTF_8);
        long totalChanges = letter.changeCount();
        List<Change> changes = new ArrayList<>(letter.changeCount());
        try (JsonParser p = Json.FACTORY.createParser(envelope)) {
            expect(letter, p.nextToken() == JsonToken.START_OBJECT, "is not a JSON object");
            while (p.nextToken() == JsonToken.FIELD_NAME) {
                String field = p.currentName();
                JsonToken value = p.nextToken();
                if ("changes".equals(field)) {
                    expect(letter, value == JsonToken.START_ARRAY, "has no \"changes\" array");
                    while (p.nextToken() == JsonToken.START_OBJECT) {
                        changes.add(change(p, envelope));
                    }
                } else if ("totalChanges".equals(field)) {
                    totalChanges = p.getLongValue();
                } else {
                    p.skipChildren();
                }
            }
        } catch (IOException e) {
            throw unreadable(letter, e.getMessage(), e);
        }
        expect(letter, changes.size() == letter.changeCount(), "holds " + changes.size() + " changes where the letter"
                + " counts " + letter.changeCount());
        return new ChangeBatch(letter.objectName(), letter.fromVersion(), letter.toVersion(), letter.syncType(),
                letter.reasonCode(), changes, letter.pageNumber(), letter.pageCount(), totalChanges);
    }

    /** Reads the contract keys of the element at START_OBJECT and cuts its bytes out of the envelope. */
    private static Change change(JsonParser p, byte[] envelope) throws IOException {
        int start = Math.toIntExact(p.currentTokenLocation().getByteOffset());
        Operation operation = null;
        Long version = null;
        List<String> changed = null;
        while (p.nextToken() == JsonToken.FIELD_NAME) {
            String key = p.currentName();
            JsonToken t = p.nextToken();
            switch (key) {
                case "$operation" -> operation = t == JsonToken.VALUE_NULL ? null
                        : Operation.fromCode(p.getText()).orElse(null);
                case "$version" -> version = t == JsonToken.VALUE_NULL ? null : p.getLongValue();
                case "$changed" -> {
                    if (t == JsonToken.START_ARRAY) {
                        changed = new ArrayList<>();
                        while (p.nextToken() != JsonToken.END_ARRAY) {
                            changed.add(p.getText());
                        }
                    }
                }
                default -> p.skipChildren();
            }
        }
        int end = Math.toIntExact(p.currentLocation().getByteOffset());
        return Change.fromRaw(operation, version, changed, Arrays.copyOfRange(envelope, start, end));
    }

    private static void expect(DeadLetter letter, boolean condition, String problem) {
        if (!condition) {
            throw unreadable(letter, problem, null);
        }
    }

    private static TidemarkException unreadable(DeadLetter letter, String problem, Throwable cause) {
        return TidemarkException.forObject(ErrorCode.STORE_FAILED, letter.objectName(), "dead letter " + letter.id()
                + " cannot be replayed: its stored envelope " + problem + ". Inspect it in the dead-letter store"
                + " and delete it once dealt with", cause);
    }
}
