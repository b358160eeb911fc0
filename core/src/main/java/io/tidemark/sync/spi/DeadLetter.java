package io.tidemark.sync.spi;

import io.tidemark.sync.SyncType;

import java.time.Instant;
import java.util.Objects;

/**
 * A page of changes a destination refused and that was set aside because the destination's
 * {@link io.tidemark.sync.DeliveryPolicy} says so. {@link #changesJson()} is the page's changes as a JSON array
 * of the elements the procedure returned.
 *
 * @param id          assigned by the store; 0 before it is stored
 * @param objectName  the tracked object the page came from
 * @param destination the destination that refused it
 * @param batchId     the cycle's batch id
 * @param pageNumber  1-based number of the page within the cycle
 * @param fromVersion the version the procedure was asked for
 * @param toVersion   the version the cycle would have stored
 * @param syncType    {@code Metadata.Sync.Type} of the cycle
 * @param reasonCode  {@code Metadata.Sync.ReasonCode} of the cycle
 * @param changeCount the number of changes in the page
 * @param changesJson the page's changes, a JSON array of the elements the procedure returned
 * @param error       why the destination refused it
 * @param createdAt   when it was set aside
 */
public record DeadLetter(long id, String objectName, String destination, String batchId, int pageNumber,
                         long fromVersion, long toVersion, SyncType syncType, int reasonCode, int changeCount,
                         String changesJson, String error, Instant createdAt) {

    public DeadLetter {
        Objects.requireNonNull(objectName, "objectName");
        Objects.requireNonNull(destination, "destination");
        Objects.requireNonNull(batchId, "batchId");
        Objects.requireNonNull(syncType, "syncType");
        Objects.requireNonNull(changesJson, "changesJson");
        Objects.requireNonNull(error, "error");
        Objects.requireNonNull(createdAt, "createdAt");
    }

    /** Returns a copy with the id a store assigned. */
    public DeadLetter withId(long newId) {
        return new DeadLetter(newId, objectName, destination, batchId, pageNumber, fromVersion, toVersion,
                syncType, reasonCode, changeCount, changesJson, error, createdAt);
    }

    @Override
    public String toString() {
        return "DeadLetter[" + id + ", " + objectName + " -> " + destination + ", " + batchId + " page "
                + pageNumber + ", " + changeCount + " changes, error=" + error + "]";
    }
}
