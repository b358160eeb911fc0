package io.tidemark.destinations.webhook.internal;

import io.tidemark.sync.ChangeBatch;

/**
 * One request's share of a page: changes {@code [from, to)} of the batch, sent under {@code id}.
 *
 * @param id     the {@code webhook-id}: the page's idempotency key, with {@code -p<part>} when the page is split
 * @param part   1-based part number
 * @param parts  how many requests the page takes
 */
public record RequestPart(ChangeBatch batch, String id, int part, int parts, int from, int to) {

    public boolean isSplit() {
        return parts > 1;
    }

    public int changeCount() {
        return to - from;
    }

    /** "part 2/3 of page 1/4 of object 'Items' (tm1-...)", for messages; no payload. */
    public String describe() {
        String page = "page " + batch.pageNumber() + "/" + batch.pageCount() + " of object '" + batch.objectName()
                + "' (" + batch.idempotencyKey() + ")";
        return isSplit() ? "part " + part + "/" + parts + " of " + page : page;
    }
}
