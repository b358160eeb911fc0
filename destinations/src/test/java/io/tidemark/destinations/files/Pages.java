package io.tidemark.destinations.files;

import io.tidemark.sync.Change;
import io.tidemark.sync.ChangeBatch;
import io.tidemark.sync.Operation;
import io.tidemark.sync.SyncType;

import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;

/** Pages of changes as the engine builds them: raw JSON, as the procedure returned it. */
final class Pages {

    private Pages() {
    }

    /** Page {@code page} of {@code pageCount} of the cycle {@code from..to} with {@code n} inserts of ids from {@code firstId}. */
    static ChangeBatch page(String object, long from, long to, int page, int pageCount, int firstId, int n) {
        List<Change> changes = new ArrayList<>();
        for (int i = 0; i < n; i++) {
            int id = firstId + i;
            String json = "{\"$operation\":\"I\",\"$version\":" + (from + 1 + i) + ",\"id\":" + id
                    + ",\"name\":\"item " + id + "\",\"price\":12.50}";
            changes.add(Change.fromRaw(Operation.INSERT, from + 1 + i, null, json.getBytes(StandardCharsets.UTF_8)));
        }
        return new ChangeBatch(object, from, to, SyncType.DIFF, 0, changes, page, pageCount, (long) n * pageCount);
    }
}
