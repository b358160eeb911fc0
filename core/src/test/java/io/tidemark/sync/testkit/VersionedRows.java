package io.tidemark.sync.testkit;

import io.tidemark.sync.spi.ChangeRequest;

import java.util.ArrayList;
import java.util.List;
import java.util.NavigableMap;
import java.util.TreeMap;
import java.util.function.Function;

/**
 * The simplest honest change function, in memory: a table of rows keyed by version, answering each request
 * with the rows after {@code fromVersion}, at most {@code maxRows} of them when asked (unless told to ignore the
 * hint, which the contract allows). Use it as a script's {@linkplain ScriptedProvider.ObjectScript#respondWith
 * responder}. Thread-safe: a test inserts while an engine polls.
 */
public final class VersionedRows implements Function<ChangeRequest, String> {

    private final NavigableMap<Long, String> rows = new TreeMap<>();
    private final boolean honourMaxRows;

    private VersionedRows(boolean honourMaxRows) {
        this.honourMaxRows = honourMaxRows;
    }

    /** A function that returns at most {@code maxRows} rows when the request carries the hint. */
    public static VersionedRows honouringMaxRows() {
        return new VersionedRows(true);
    }

    /** A function that always returns every row after {@code fromVersion}. */
    public static VersionedRows ignoringMaxRows() {
        return new VersionedRows(false);
    }

    /** Inserts rows with versions {@code from..to}, each {@code {"Body":"row <version>"}}. */
    public synchronized VersionedRows insert(long from, long to) {
        for (long v = from; v <= to; v++) {
            rows.put(v, "row " + v);
        }
        return this;
    }

    @Override
    public synchronized String apply(ChangeRequest request) {
        List<String> data = new ArrayList<>();
        long top = -1;
        for (var row : rows.tailMap(request.fromVersion(), false).entrySet()) {
            if (honourMaxRows && request.maxRows().isPresent() && data.size() >= request.maxRows().getAsInt()) {
                break;
            }
            data.add(Responses.row("I", row.getKey(), "\"Body\":\"" + row.getValue() + "\""));
            top = row.getKey();
        }
        long version = top >= 0 ? top : rows.isEmpty() ? 0 : rows.lastKey();
        return Responses.response(version, "Diff", 0, data.toArray(String[]::new));
    }
}
