package io.tidemark.sync;

import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.HexFormat;
import java.util.List;
import java.util.Objects;

/**
 * One page of one cycle's changes for one tracked object, handed to every destination in turn.
 *
 * <p>A cycle's changes arrive as pages {@code 1..pageCount()} of at most the configured page size. The
 * watermark moves to {@link #toVersion()} only after every destination accepted every page; if any refuses,
 * the next cycle offers the same changes again, so destinations must tolerate seeing a change twice.
 * {@link #idempotencyKey()} gives an idempotent consumer a stable key for that; {@link Envelope} writes the page
 * in the JSON form the contract documents.
 */
public final class ChangeBatch {

    private final String objectName;
    private final long fromVersion;
    private final long toVersion;
    private final SyncType syncType;
    private final int reasonCode;
    private final List<Change> changes;
    private final int pageNumber;
    private final int pageCount;
    private final long totalChanges;
    private volatile String idempotencyKey;

    public ChangeBatch(String objectName, long fromVersion, long toVersion, SyncType syncType, int reasonCode,
                       List<Change> changes, int pageNumber, int pageCount, long totalChanges) {
        this.objectName = Objects.requireNonNull(objectName, "objectName");
        this.fromVersion = fromVersion;
        this.toVersion = toVersion;
        this.syncType = Objects.requireNonNull(syncType, "syncType");
        this.reasonCode = reasonCode;
        this.changes = List.copyOf(changes);
        this.pageNumber = pageNumber;
        this.pageCount = pageCount;
        this.totalChanges = totalChanges;
    }

    public String objectName() {
        return objectName;
    }

    /** The version the procedure was asked for ({@code fromVersion} of the request). */
    public long fromVersion() {
        return fromVersion;
    }

    /** The version that is stored once every destination accepted every page of this cycle. */
    public long toVersion() {
        return toVersion;
    }

    /** {@code Metadata.Sync.Type}: {@link SyncType#FULL} means the source was re-exported as a whole. */
    public SyncType syncType() {
        return syncType;
    }

    /** {@code Metadata.Sync.ReasonCode}; for example 1 when Change Tracking history aged out and a full re-sync followed. */
    public int reasonCode() {
        return reasonCode;
    }

    /** The changes of this page, in the order the procedure returned them. */
    public List<Change> changes() {
        return changes;
    }

    /** 1-based number of this page within the cycle. */
    public int pageNumber() {
        return pageNumber;
    }

    public int pageCount() {
        return pageCount;
    }

    public boolean isLastPage() {
        return pageNumber == pageCount;
    }

    /** Number of changes in the whole cycle, over all pages. */
    public long totalChanges() {
        return totalChanges;
    }

    /**
     * A key for the cycle this page belongs to, the same whenever the same range is offered again:
     * {@code <object>:<fromVersion>-<toVersion>}. Combine with {@link #pageNumber()} for a page key.
     */
    public String batchId() {
        return objectName + ":" + fromVersion + "-" + toVersion;
    }

    /**
     * A key that is the same every time these changes are offered again, so a consumer can drop duplicates:
     * {@code tm1-} and 32 hex digits of a SHA-256 over the object's name, the version range, the page number and
     * the number of pages. Header-safe (ASCII letters, digits and a dash); computed once per page.
     */
    public String idempotencyKey() {
        String key = idempotencyKey;
        if (key == null) {
            key = IdempotencyKeys.of(objectName, fromVersion, toVersion, pageNumber, pageCount);
            idempotencyKey = key;
        }
        return key;
    }

    @Override
    public String toString() {
        return "ChangeBatch[" + batchId() + ", " + syncType + ", reason " + reasonCode + ", page " + pageNumber
                + "/" + pageCount + ", " + changes.size() + " of " + totalChanges + " changes]";
    }

    /** Derives {@link #idempotencyKey()}; the derivation is part of the contract, so it never changes silently. */
    private static final class IdempotencyKeys {
        private static final HexFormat HEX = HexFormat.of();

        static String of(String objectName, long fromVersion, long toVersion, int pageNumber, int pageCount) {
            String material = objectName + '\0' + fromVersion + '\0' + toVersion + '\0' + pageNumber
                    + '\0' + pageCount;
            try {
                byte[] digest = MessageDigest.getInstance("SHA-256").digest(material.getBytes(StandardCharsets.UTF_8));
                return "tm1-" + HEX.formatHex(digest, 0, 16);
            } catch (NoSuchAlgorithmException e) {
                throw new IllegalStateException("every Java platform provides SHA-256", e);
            }
        }
    }
}
