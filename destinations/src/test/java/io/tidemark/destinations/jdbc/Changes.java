package io.tidemark.destinations.jdbc;

import io.tidemark.sync.Change;
import io.tidemark.sync.ChangeBatch;
import io.tidemark.sync.Operation;
import io.tidemark.sync.SyncType;

import java.nio.charset.StandardCharsets;
import java.util.Arrays;
import java.util.List;

/** Changes and pages as the engine hands them over: each change the procedure's raw JSON. */
final class Changes {

    private Changes() {
    }

    /** A change from its JSON, the contract keys read from it the way the engine reads them. */
    static Change change(String json) {
        Operation operation = null;
        if (json.contains("\"$operation\":\"I\"")) {
            operation = Operation.INSERT;
        } else if (json.contains("\"$operation\":\"U\"")) {
            operation = Operation.UPDATE;
        } else if (json.contains("\"$operation\":\"D\"")) {
            operation = Operation.DELETE;
        }
        List<String> changed = null;
        int at = json.indexOf("\"$changed\":[");
        if (at >= 0) {
            String list = json.substring(at + 12, json.indexOf(']', at));
            changed = list.isBlank() ? List.of() : Arrays.stream(list.split(","))
                    .map(s -> s.strip().replace("\"", "")).toList();
        }
        return Change.fromRaw(operation, null, changed, json.getBytes(StandardCharsets.UTF_8));
    }

    static ChangeBatch diff(String object, long from, long to, int page, int pageCount, String... changes) {
        return batch(object, SyncType.DIFF, from, to, page, pageCount, changes);
    }

    static ChangeBatch full(String object, long to, int page, int pageCount, String... changes) {
        return batch(object, SyncType.FULL, 0, to, page, pageCount, changes);
    }

    private static ChangeBatch batch(String object, SyncType type, long from, long to, int page, int pageCount,
                                     String... changes) {
        List<Change> list = Arrays.stream(changes).map(Changes::change).toList();
        return new ChangeBatch(object, from, to, type, 0, list, page, pageCount, (long) list.size() * pageCount);
    }
}
