package io.tidemark.sync.internal.engine;

import io.tidemark.sync.Change;
import io.tidemark.sync.ChangeBatch;
import io.tidemark.sync.DeliveryPolicy;
import io.tidemark.sync.ErrorCode;
import io.tidemark.sync.TidemarkException;
import io.tidemark.sync.TrackedObject;
import io.tidemark.sync.internal.contract.ChangeReader;
import io.tidemark.sync.internal.contract.ResponseSummary;
import io.tidemark.sync.spi.CallContext;
import io.tidemark.sync.spi.DeadLetter;
import io.tidemark.sync.spi.ResponsePayload;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.time.Duration;
import java.util.List;

/**
 * Hands a checked response to the destinations, one page at a time: page 1 to every destination, then page 2,
 * and so on. Applies each destination's {@link DeliveryPolicy} when it refuses.
 */
final class PageDelivery {

    private static final Logger LOG = LoggerFactory.getLogger(PageDelivery.class);

    private final EngineConfig config;
    private final CallContext calls;

    PageDelivery(EngineConfig config, CallContext calls) {
        this.config = config;
        this.calls = calls;
    }

    /** Delivers every page; returns the number of pages dead-lettered. Throws when a destination blocks. */
    Result deliver(TrackedObject object, ResponsePayload payload, ResponseSummary summary, long fromVersion) {
        int pageSize = config.pageSize(object);
        long total = summary.rowCount();
        int pageCount = Math.toIntExact((total + pageSize - 1) / pageSize);
        long toVersion = summary.versionToStore();
        int deadLettered = 0;
        try (ChangeReader reader = new ChangeReader(object.name(), payload)) {
            for (int page = 1; page <= pageCount; page++) {
                checkNotCancelled(object);
                List<Change> changes = reader.nextPage(pageSize);
                long expected = Math.min(pageSize, total - (long) (page - 1) * pageSize);
                if (changes.size() != expected) {
                    throw new TidemarkException(ErrorCode.INTERNAL, object.name(), "[" + object.name()
                            + "] page " + page + " held " + changes.size() + " changes where the check counted "
                            + expected + "; nothing more is delivered and the watermark stays", null);
                }
                ChangeBatch batch = new ChangeBatch(object.name(), fromVersion, toVersion, summary.syncType(),
                        summary.reasonCode(), changes, page, pageCount, total);
                for (NamedDestination destination : config.destinations()) {
                    deadLettered += offer(object, destination, batch);
                }
            }
        }
        return new Result(pageCount, deadLettered);
    }

    /** Returns 1 if the page was dead-lettered, 0 if accepted; throws if the destination blocks. */
    private int offer(TrackedObject object, NamedDestination destination, ChangeBatch batch) {
        DeliveryPolicy policy = destination.policy();
        Exception last = null;
        Duration wait = policy.backoff();
        for (int attempt = 1; attempt <= policy.maxAttempts(); attempt++) {
            checkNotCancelled(object);
            try {
                destination.destination().deliver(batch);
                return 0;
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                throw cancelled(object, e);
            } catch (Exception e) {
                last = e;
                LOG.warn("[{}] destination '{}' refused page {}/{} of {} (attempt {} of {}): {}", object.name(),
                        destination.name(), batch.pageNumber(), batch.pageCount(), batch.batchId(), attempt,
                        policy.maxAttempts(), e.toString());
            }
            if (attempt < policy.maxAttempts() && !wait.isZero()) {
                pause(object, wait);
                wait = wait.multipliedBy(2);
            }
        }
        if (policy.whenExhausted() == DeliveryPolicy.WhenExhausted.DEAD_LETTER) {
            DeadLetter letter = config.deadLetters().record(
                    DeadLetter.of(batch, destination.name(), last, config.clock().instant()));
            LOG.warn("[{}] page {}/{} of {} ({} changes) refused by destination '{}' was stored as dead letter {}"
                            + " and delivery moved on, as its policy allows", object.name(), batch.pageNumber(),
                    batch.pageCount(), batch.batchId(), batch.changes().size(), destination.name(), letter.id());
            return 1;
        }
        throw TidemarkException.forObject(ErrorCode.DESTINATION_FAILED, object.name(),
                "destination '" + destination.name() + "' refused page " + batch.pageNumber() + "/"
                        + batch.pageCount() + " of " + batch.batchId() + " after " + policy.maxAttempts()
                        + (policy.maxAttempts() == 1 ? " attempt" : " attempts") + ": " + last
                        + ". The watermark stays at " + batch.fromVersion()
                        + " and the same changes will be offered again.", last);
    }

    private void pause(TrackedObject object, Duration wait) {
        try {
            Thread.sleep(wait.toMillis());
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw cancelled(object, e);
        }
    }

    private void checkNotCancelled(TrackedObject object) {
        if (calls.isCancelled() || Thread.currentThread().isInterrupted()) {
            throw cancelled(object, null);
        }
    }

    private static TidemarkException cancelled(TrackedObject object, Throwable cause) {
        return TidemarkException.forObject(ErrorCode.ENGINE_STATE, object.name(),
                "delivery was cancelled because the engine is closing; the watermark stays and the changes will"
                        + " be offered again", cause);
    }

    /** What a delivery did. */
    static final class Result {
        final int pages;
        final int deadLettered;

        Result(int pages, int deadLettered) {
            this.pages = pages;
            this.deadLettered = deadLettered;
        }
    }
}
