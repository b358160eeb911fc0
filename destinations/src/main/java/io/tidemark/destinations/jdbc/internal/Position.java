package io.tidemark.destinations.jdbc.internal;

import io.tidemark.sync.ChangeBatch;
import io.tidemark.sync.SyncType;

/**
 * The last page a destination applied to its table for one object, as its position row records it; and what that
 * means for a page offered now.
 *
 * @param fromVersion null before the first page
 */
public record Position(Long fromVersion, long toVersion, int pageNumber, int pageCount, SyncType syncType) {

    /** What to do with an offered page. */
    public enum Decision {
        /** Not applied yet: apply it. */
        APPLY,
        /** Already applied (this page of this cycle, or a cycle the position has passed): skip it. */
        SKIP
    }

    /** No page applied yet. */
    public static final Position NONE = new Position(null, 0, 0, 0, null);

    public boolean isNone() {
        return fromVersion == null;
    }

    /** Whether the recorded page is the last of its cycle. */
    public boolean isComplete() {
        return !isNone() && pageNumber == pageCount;
    }

    /** Whether {@code batch} belongs to the recorded cycle: the same range, the same paging, the same kind. */
    public boolean isSameCycle(ChangeBatch batch) {
        return !isNone() && fromVersion == batch.fromVersion() && toVersion == batch.toVersion()
                && pageCount == batch.pageCount() && syncType == batch.syncType();
    }

    /** Whether the recorded page is an unfinished FULL export. */
    public boolean isUnfinishedFull() {
        return !isNone() && syncType == SyncType.FULL && pageNumber < pageCount;
    }

    /**
     * A page of the recorded cycle up to the recorded page was applied; a DIFF page of another cycle that ends at
     * or before a completed position holds only changes the table already has (a later page size, or a retry
     * after the engine lost track of what was accepted). Anything else is applied; a FULL export is always applied
     * unless it is the same cycle, since it replaces the content.
     */
    public Decision decide(ChangeBatch batch) {
        if (isNone()) {
            return Decision.APPLY;
        }
        if (isSameCycle(batch)) {
            return batch.pageNumber() <= pageNumber ? Decision.SKIP : Decision.APPLY;
        }
        if (batch.syncType() == SyncType.DIFF && isComplete() && batch.toVersion() <= toVersion) {
            return Decision.SKIP;
        }
        return Decision.APPLY;
    }

    @Override
    public String toString() {
        return isNone() ? "no page applied" : "page " + pageNumber + "/" + pageCount + " of " + syncType + " "
                + fromVersion + "-" + toVersion;
    }
}
