package io.tidemark.sync.internal.engine;

import io.tidemark.sync.Change;

import java.util.List;
import java.util.OptionalLong;

/**
 * Where a destination can stand between two pages of a response whose rows carry ascending {@code $version}s:
 * the highest version every row of which was in the pages before. A version that continues across the boundary
 * (rows of one transaction split by the page size) is not complete yet, so the boundary stays below it.
 */
final class PageBoundary {

    private long stored;
    /** The highest version seen so far, and the highest below it; null before any row. */
    private Long last;
    private Long belowLast;

    PageBoundary(long fromVersion) {
        this.stored = fromVersion;
    }

    /** The position the destinations that accepted every page so far stand at (the last boundary reached). */
    long reached() {
        return stored;
    }

    /**
     * Called with each page before it is offered: returns the position the destinations that accepted every
     * earlier page have reached, when it moved since the last one returned.
     */
    OptionalLong before(List<Change> page) {
        OptionalLong reached = OptionalLong.empty();
        if (last != null && !page.isEmpty()) {
            long first = page.get(0).version().orElseThrow();
            Long complete = first > last ? last : belowLast;
            if (complete != null && complete > stored) {
                stored = complete;
                reached = OptionalLong.of(complete);
            }
        }
        for (Change change : page) {
            long v = change.version().orElseThrow();
            if (last == null || v > last) {
                belowLast = last;
                last = v;
            }
        }
        return reached;
    }
}
