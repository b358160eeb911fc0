package io.tidemark.sync.testkit;

/** Response bodies written as a change procedure writes them, for scripts. */
public final class Responses {

    private Responses() {
    }

    /** A valid response whose rows are given as JSON objects. */
    public static String response(long version, String type, int reason, String... rows) {
        return "{\"Metadata\":{\"Sync\":{\"Version\":" + version + ",\"Type\":\"" + type + "\",\"ReasonCode\":" + reason
                + "}},\"Data\":[" + String.join(",", rows) + "]}";
    }

    /** One row with an operation, a version and further fields ({@code "Id":1,...}, or empty). */
    public static String row(String op, long version, String fields) {
        return "{\"$operation\":\"" + op + "\",\"$version\":" + version + (fields.isEmpty() ? "" : "," + fields) + "}";
    }

    /** {@code count} insert rows with versions {@code first, first+1, ...} and an {@code Id} counting from 0. */
    public static String[] inserts(long first, int count) {
        String[] rows = new String[count];
        for (int i = 0; i < count; i++) {
            rows[i] = row("I", first + i, "\"Id\":" + i);
        }
        return rows;
    }
}
