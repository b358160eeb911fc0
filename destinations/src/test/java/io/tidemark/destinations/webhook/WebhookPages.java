package io.tidemark.destinations.webhook;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.tidemark.sync.Change;
import io.tidemark.sync.ChangeBatch;
import io.tidemark.sync.Operation;
import io.tidemark.sync.SyncType;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.Random;

/** Pages of changes for the webhook tests, built the way the engine builds them (from the procedure's bytes). */
final class WebhookPages {

    static final ObjectMapper JSON = new ObjectMapper();

    private WebhookPages() {
    }

    /** {@code count} inserts with versions from {@code firstVersion}, each with a description of varying length. */
    static ChangeBatch page(String object, long firstVersion, int count, int pageNumber, int pageCount, long seed) {
        Random random = new Random(seed);
        List<Change> changes = new ArrayList<>(count);
        for (int i = 0; i < count; i++) {
            long version = firstVersion + i;
            String raw = "{\"$operation\":\"I\",\"$version\":" + version + ",\"Id\":" + i + ",\"Description\":\""
                    + "é".repeat(random.nextInt(5)) + "x".repeat(random.nextInt(120)) + "\",\"Price\":12.50}";
            changes.add(Change.fromRaw(Operation.INSERT, version, null, raw.getBytes(StandardCharsets.UTF_8)));
        }
        return new ChangeBatch(object, firstVersion - 1, firstVersion + count - 1, SyncType.DIFF, 0, changes,
                pageNumber, pageCount, (long) count * pageCount);
    }

    static ChangeBatch page(int count) {
        return page("Items", 100, count, 1, 1, 42);
    }

    static JsonNode parse(byte[] body) {
        try {
            return JSON.readTree(body);
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    /** The {@code $version}s of the changes in one request body, in order. */
    static List<Long> versions(byte[] body) {
        List<Long> versions = new ArrayList<>();
        parse(body).get("changes").forEach(c -> versions.add(c.get("$version").asLong()));
        return versions;
    }

    static List<Long> versions(ChangeBatch batch) {
        return batch.changes().stream().map(c -> c.version().getAsLong()).toList();
    }
}
