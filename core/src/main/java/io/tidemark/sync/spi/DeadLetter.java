package io.tidemark.sync.spi;

import io.tidemark.sync.SyncType;

import java.time.Instant;
import java.util.Objects;

/**
 * A page of changes a destination refused and that was set aside because the destination's
 * {@link io.tidemark.sync.DeliveryPolicy} says so. {@link #changesJson()} is the page's changes as a JSON array
 * of the elements the procedure returned.
 */
public final class DeadLetter {

    private final long id;
    private final String objectName;
    private final String destination;
    private final String batchId;
    private final int pageNumber;
    private final long fromVersion;
    private final long toVersion;
    private final SyncType syncType;
    private final int reasonCode;
    private final int changeCount;
    private final String changesJson;
    private final String error;
    private final Instant createdAt;

    public DeadLetter(long id, String objectName, String destination, String batchId, int pageNumber,
                      long fromVersion, long toVersion, SyncType syncType, int reasonCode, int changeCount,
                      String changesJson, String error, Instant createdAt) {
        this.id = id;
        this.objectName = Objects.requireNonNull(objectName, "objectName");
        this.destination = Objects.requireNonNull(destination, "destination");
        this.batchId = Objects.requireNonNull(batchId, "batchId");
        this.pageNumber = pageNumber;
        this.fromVersion = fromVersion;
        this.toVersion = toVersion;
        this.syncType = Objects.requireNonNull(syncType, "syncType");
        this.reasonCode = reasonCode;
        this.changeCount = changeCount;
        this.changesJson = Objects.requireNonNull(changesJson, "changesJson");
        this.error = Objects.requireNonNull(error, "error");
        this.createdAt = Objects.requireNonNull(createdAt, "createdAt");
    }

    /** Returns a copy with the id a store assigned. */
    public DeadLetter withId(long newId) {
        return new DeadLetter(newId, objectName, destination, batchId, pageNumber, fromVersion, toVersion,
                syncType, reasonCode, changeCount, changesJson, error, createdAt);
    }

    /** Assigned by the store; 0 before it is stored. */
    public long id() {
        return id;
    }

    public String objectName() {
        return objectName;
    }

    public String destination() {
        return destination;
    }

    public String batchId() {
        return batchId;
    }

    public int pageNumber() {
        return pageNumber;
    }

    public long fromVersion() {
        return fromVersion;
    }

    public long toVersion() {
        return toVersion;
    }

    public SyncType syncType() {
        return syncType;
    }

    public int reasonCode() {
        return reasonCode;
    }

    public int changeCount() {
        return changeCount;
    }

    public String changesJson() {
        return changesJson;
    }

    public String error() {
        return error;
    }

    public Instant createdAt() {
        return createdAt;
    }

    @Override
    public String toString() {
        return "DeadLetter[" + id + ", " + objectName + " -> " + destination + ", " + batchId + " page "
                + pageNumber + ", " + changeCount + " changes, error=" + error + "]";
    }
}
