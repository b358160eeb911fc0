package io.tidemark.sync.spi;

import io.tidemark.sync.ChangeBatch;
import io.tidemark.sync.Envelope;
import io.tidemark.sync.SyncType;

import java.nio.charset.StandardCharsets;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Objects;

/**
 * A page of changes a destination refused until its {@link io.tidemark.sync.DeliveryPolicy} ran out of attempts,
 * kept so it can be inspected, replayed to that destination, or purged.
 *
 * <p>A letter is identified by its object, its destination and the page's {@link #idempotencyKey()}: when the
 * same page is refused again (a blocked destination is offered the same changes every cycle), the store counts
 * one more attempt on the letter it has instead of adding a second one ({@link #mergedWith}).
 *
 * @param id             assigned by the store; 0 before it is stored
 * @param objectName     the tracked object the page came from
 * @param destination    the destination that refused it
 * @param idempotencyKey the page's {@link ChangeBatch#idempotencyKey()}
 * @param batchId        the cycle's {@link ChangeBatch#batchId()}
 * @param pageNumber     1-based number of the page within the cycle
 * @param pageCount      number of pages of the cycle (0 for a letter stored before page counts were kept)
 * @param fromVersion    the version the procedure was asked for
 * @param toVersion      the version the cycle would have stored
 * @param syncType       {@code Metadata.Sync.Type} of the cycle
 * @param reasonCode     {@code Metadata.Sync.ReasonCode} of the cycle
 * @param changeCount    the number of changes in the page
 * @param envelope       the page in its JSON form ({@link Envelope}), changes included, exactly as the destination
 *                       was offered it
 * @param attempts       how many times delivery of this page to this destination failed, over every cycle and
 *                       replay (each cycle's failed retries count as one)
 * @param failures       the most recent failures, oldest first, at most {@link #MAX_FAILURES}
 * @param firstFailedAt  when the page was first set aside
 * @param lastFailedAt   when the most recent failure happened
 */
public record DeadLetter(long id, String objectName, String destination, String idempotencyKey, String batchId,
                         int pageNumber, int pageCount, long fromVersion, long toVersion, SyncType syncType,
                         int reasonCode, int changeCount, String envelope, int attempts, List<Failure> failures,
                         Instant firstFailedAt, Instant lastFailedAt) {

    /** How many failures a letter keeps; older ones are dropped (the attempt count keeps counting). */
    public static final int MAX_FAILURES = 20;

    /** How much of one error's text is kept: a stack trace in a message must not bloat the table. */
    public static final int MAX_ERROR_LENGTH = 2000;

    /** One failed delivery: when it happened and what the destination said. */
    public record Failure(Instant at, String error) {
        public Failure {
            Objects.requireNonNull(at, "at");
            Objects.requireNonNull(error, "error");
            if (error.length() > MAX_ERROR_LENGTH) {
                error = error.substring(0, MAX_ERROR_LENGTH - 1) + "…";
            }
        }

        /** The failure {@code error} describes, at {@code at}. */
        public static Failure of(Throwable error, Instant at) {
            return new Failure(at, String.valueOf(error));
        }
    }

    public DeadLetter {
        Objects.requireNonNull(objectName, "objectName");
        Objects.requireNonNull(destination, "destination");
        Objects.requireNonNull(idempotencyKey, "idempotencyKey");
        Objects.requireNonNull(batchId, "batchId");
        Objects.requireNonNull(syncType, "syncType");
        Objects.requireNonNull(envelope, "envelope");
        Objects.requireNonNull(firstFailedAt, "firstFailedAt");
        Objects.requireNonNull(lastFailedAt, "lastFailedAt");
        failures = lastOf(Objects.requireNonNull(failures, "failures"));
        if (attempts < 1) {
            throw new IllegalArgumentException("a dead letter records at least one attempt, got " + attempts);
        }
    }

    /** A new letter for {@code batch}, refused by {@code destination} with {@code error} at {@code at}. */
    public static DeadLetter of(ChangeBatch batch, String destination, Throwable error, Instant at) {
        return new DeadLetter(0, batch.objectName(), destination, batch.idempotencyKey(), batch.batchId(),
                batch.pageNumber(), batch.pageCount(), batch.fromVersion(), batch.toVersion(), batch.syncType(),
                batch.reasonCode(), batch.changes().size(),
                new String(Envelope.toBytes(batch), StandardCharsets.UTF_8), 1, List.of(Failure.of(error, at)),
                at, at);
    }

    /** The most recent failure's error. */
    public String lastError() {
        return failures.isEmpty() ? "" : failures.get(failures.size() - 1).error();
    }

    /** Returns a copy with the id a store assigned. */
    public DeadLetter withId(long newId) {
        return new DeadLetter(newId, objectName, destination, idempotencyKey, batchId, pageNumber, pageCount,
                fromVersion, toVersion, syncType, reasonCode, changeCount, envelope, attempts, failures,
                firstFailedAt, lastFailedAt);
    }

    /**
     * This letter after the same page failed again as {@code again} describes: the attempts add up, the failures
     * are appended (the newest {@link #MAX_FAILURES} kept), the first failure stays the earlier one and the last
     * the later one. Keeps this letter's id and page.
     */
    public DeadLetter mergedWith(DeadLetter again) {
        List<Failure> all = new ArrayList<>(failures);
        all.addAll(again.failures);
        all.sort((a, b) -> a.at().compareTo(b.at()));
        Instant first = firstFailedAt.isBefore(again.firstFailedAt) ? firstFailedAt : again.firstFailedAt;
        Instant last = lastFailedAt.isAfter(again.lastFailedAt) ? lastFailedAt : again.lastFailedAt;
        return new DeadLetter(id, objectName, destination, idempotencyKey, batchId, pageNumber, pageCount,
                fromVersion, toVersion, syncType, reasonCode, changeCount, envelope, attempts + again.attempts, all,
                first, last);
    }

    /** This letter after one more failed delivery (a replay the destination refused). */
    public DeadLetter withFailure(Failure failure) {
        return mergedWith(new DeadLetter(id, objectName, destination, idempotencyKey, batchId, pageNumber,
                pageCount, fromVersion, toVersion, syncType, reasonCode, changeCount, envelope, 1,
                List.of(failure), failure.at(), failure.at()));
    }

    private static List<Failure> lastOf(List<Failure> failures) {
        int from = Math.max(0, failures.size() - MAX_FAILURES);
        return List.copyOf(failures.subList(from, failures.size()));
    }

    @Override
    public String toString() {
        return "DeadLetter[" + id + ", " + objectName + " -> " + destination + ", " + batchId + " page "
                + pageNumber + "/" + pageCount + ", " + changeCount + " changes, " + attempts
                + (attempts == 1 ? " attempt" : " attempts") + ", last error=" + lastError() + "]";
    }
}
