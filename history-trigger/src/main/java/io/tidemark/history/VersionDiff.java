package io.tidemark.history;

import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Objects;

/**
 * The difference between two versions: the columns whose values differ (compared as PostgreSQL compares their
 * JSON images, so {@code 1.0} and {@code 1.00} are equal and json is compared by value, not by text).
 */
public final class VersionDiff {

    /** One changed column. */
    public record Change(Object before, Object after) {
    }

    private final HistoryRow from;
    private final HistoryRow to;
    private final Map<String, Change> changes;

    public VersionDiff(HistoryRow from, HistoryRow to, Map<String, Change> changes) {
        this.from = Objects.requireNonNull(from, "from");
        this.to = Objects.requireNonNull(to, "to");
        this.changes = Collections.unmodifiableMap(new LinkedHashMap<>(changes));
    }

    public HistoryRow from() {
        return from;
    }

    public HistoryRow to() {
        return to;
    }

    /** Changed columns in table order. */
    public Map<String, Change> changes() {
        return changes;
    }

    @Override
    public String toString() {
        return "VersionDiff[" + from.historyId() + " -> " + to.historyId() + ": " + changes + "]";
    }
}
