package io.tidemark.sync.internal.engine;

import io.tidemark.sync.Change;
import io.tidemark.sync.ChangeBatch;
import io.tidemark.sync.DeliveryPolicy;
import io.tidemark.sync.ErrorCode;
import io.tidemark.sync.TidemarkException;
import io.tidemark.sync.TrackedObject;
import io.tidemark.sync.internal.contract.ChangeReader;
import io.tidemark.sync.internal.contract.ResponseSummary;
import io.tidemark.sync.internal.coordination.Fences;
import io.tidemark.sync.internal.coordination.InFlightPage;
import io.tidemark.sync.spi.CallContext;
import io.tidemark.sync.spi.DeadLetter;
import io.tidemark.sync.spi.DeliveryException;
import io.tidemark.sync.spi.ResponsePayload;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ThreadLocalRandom;

/**
 * Hands a checked response to the destinations that share its call, one page at a time: page 1 to each of them,
 * then page 2, and so on. Applies each destination's {@link DeliveryPolicy} when it refuses: a destination that
 * blocks receives no further page of the response, the others carry on. A page a destination accepted is never
 * offered to it again within the cycle.
 */
final class PageDelivery {

    private static final Logger LOG = LoggerFactory.getLogger(PageDelivery.class);

    private final EngineConfig config;
    private final CallContext calls;
    /** Per object and destination: no attempt before this time, as the destination asked (Retry-After). */
    private final Map<String, Instant> notBefore = new ConcurrentHashMap<>();
    private final BlockedLetters blockedLetters = new BlockedLetters();
    private final DeliverySignals signals;

    PageDelivery(EngineConfig config, CallContext calls) {
        this.config = config;
        this.calls = calls;
        this.signals = new DeliverySignals(config.listeners());
    }

    /**
     * When the destination asked not to be called before some time that has not come yet: the refusal that said
     * so, to report it blocked without calling it.
     */
    Optional<TidemarkException> deferred(TrackedObject object, NamedDestination destination) {
        Instant until = notBefore.get(key(object, destination));
        if (until == null) {
            return Optional.empty();
        }
        if (!config.clock().instant().isBefore(until)) {
            notBefore.remove(key(object, destination));
            return Optional.empty();
        }
        return Optional.of(TidemarkException.forObject(ErrorCode.DESTINATION_FAILED, object.name(),
                "destination '" + destination.name() + "' asked not to be called before " + until
                        + " (Retry-After); its position stays and the same changes will be offered then"));
    }

    /** Stores the positions of destinations that accepted every page so far. */
    @FunctionalInterface
    interface Progress {
        void reached(List<NamedDestination> destinations, long version);
    }

    /**
     * Delivers every page to {@code members}; returns what each of them did, by name. With {@code together} (an
     * object's very first cycle, where no destination has a position to fall back to) the first destination that
     * blocks stops the delivery for all of them: the exception is thrown.
     *
     * <p>When the response {@link ResponseSummary#resumableBetweenPages() allows it}, the destinations that
     * accepted every page so far are moved through {@code progress} before the next page is offered, to the highest
     * version that page does not continue: a crash or a block then costs at most the page in flight.
     */
    Map<String, Result> deliver(TrackedObject object, ResponsePayload payload, ResponseSummary summary,
                                long fromVersion, List<NamedDestination> members, boolean together,
                                Progress progress) {
        return deliver(object, payload, summary, fromVersion, 1, members, together, progress);
    }

    /**
     * As {@link #deliver(TrackedObject, ResponsePayload, ResponseSummary, long, List, boolean, Progress)}, starting
     * at page {@code firstPage}: the pages before it are read (they count for the page boundaries) but not offered,
     * because every member took them already (a page in flight delivered again after a failover).
     */
    Map<String, Result> deliver(TrackedObject object, ResponsePayload payload, ResponseSummary summary,
                                long fromVersion, int firstPage, List<NamedDestination> members, boolean together,
                                Progress progress) {
        int pageSize = config.pageSize(object);
        long total = summary.rowCount();
        int pageCount = Math.toIntExact((total + pageSize - 1) / pageSize);
        long toVersion = summary.versionToStore();
        Map<String, Result> results = new LinkedHashMap<>();
        members.forEach(m -> results.put(m.name(), new Result()));
        List<NamedDestination> active = new ArrayList<>(members);
        boolean resumable = summary.resumableBetweenPages();
        PageBoundary boundary = new PageBoundary(fromVersion);
        try (ChangeReader reader = new ChangeReader(object.name(), payload)) {
            for (int page = 1; page <= pageCount && !active.isEmpty(); page++) {
                checkNotCancelled(object);
                long expected = Math.min(pageSize, total - (long) (page - 1) * pageSize);
                // No more than the summary counts: a response cut to a page in flight holds more rows after it.
                List<Change> changes = reader.nextPage((int) expected);
                if (changes.size() != expected) {
                    throw new TidemarkException(ErrorCode.INTERNAL, object.name(), "[" + object.name()
                            + "] page " + page + " held " + changes.size() + " changes where the check counted "
                            + expected + "; nothing more is delivered and the positions stay", null);
                }
                if (page < firstPage) {
                    if (resumable) {
                        boundary.before(changes);
                    }
                    continue;
                }
                if (resumable) {
                    boundary.before(changes).ifPresent(version -> progress.reached(List.copyOf(active), version));
                }
                int number = page;
                // With coordination, the page is recorded (fenced) before it is offered: a failover now brings it
                // back under the same key. Without coordination this builds and writes nothing.
                long standing = boundary.reached();
                Fences.recordInFlight(object.name(), () -> new InFlightPage(fromVersion, toVersion, number,
                        pageCount, pageSize, total, standing, resumable,
                        active.stream().map(NamedDestination::name).toList()));
                ChangeBatch batch = new ChangeBatch(object.name(), fromVersion, toVersion, summary.syncType(),
                        summary.reasonCode(), changes, page, pageCount, total);
                for (NamedDestination destination : List.copyOf(active)) {
                    Result result = results.get(destination.name());
                    try (LogContext logContext = LogContext.delivery(destination.name(), batch.idempotencyKey())) {
                        offer(object, destination, batch, result);
                    }
                    if (result.blocked != null && together) {
                        throw result.blocked;
                    }
                    if (result.blocked != null) {
                        active.remove(destination);
                    }
                }
            }
        }
        return results;
    }

    /** Offers one page to one destination under its policy, recording the outcome in {@code result}. */
    private void offer(TrackedObject object, NamedDestination destination, ChangeBatch batch, Result result) {
        DeliveryPolicy policy = destination.policy();
        Exception last = null;
        int attempts = 0;
        boolean deferred = false;
        while (attempts < policy.maxAttempts()) {
            checkNotCancelled(object);
            attempts++;
            long started = System.nanoTime();
            try {
                destination.destination().deliver(batch);
                signals.attempted(object.name(), destination.name(), batch, started, null);
                result.pages++;
                return;
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                throw cancelled(object, e);
            } catch (Exception e) {
                last = e;
                signals.attempted(object.name(), destination.name(), batch, started, e);
                LOG.warn("[{}] destination '{}' refused page {}/{} of {} (attempt {} of {}): {}", object.name(),
                        destination.name(), batch.pageNumber(), batch.pageCount(), batch.batchId(), attempts,
                        policy.maxAttempts(), e.toString());
            }
            DeliveryException refusal = last instanceof DeliveryException d ? d : null;
            if (refusal != null && !refusal.isRetryable()) {
                break; // fatal: the destination says another attempt cannot succeed
            }
            if (attempts >= policy.maxAttempts()) {
                break;
            }
            Optional<Duration> retryAfter = refusal == null ? Optional.empty() : refusal.retryAfter();
            if (retryAfter.isPresent() && retryAfter.get().compareTo(policy.maxDelay()) > 0) {
                // Longer than this policy waits within a cycle: honour it across cycles instead.
                notBefore.put(key(object, destination), config.clock().instant().plus(retryAfter.get()));
                deferred = true;
                break;
            }
            sleep(object, retryAfter.isPresent() ? retryAfter.get() : jittered(policy.delayBound(attempts)));
        }
        if (!deferred && policy.whenExhausted() == DeliveryPolicy.WhenExhausted.DEAD_LETTER) {
            DeadLetter letter = config.deadLetters().record(
                    DeadLetter.of(batch, destination.name(), last, config.clock().instant()));
            LOG.warn("[{}] page {}/{} of {} ({} changes) refused by destination '{}' was stored as dead letter {}"
                            + " and delivery to it moved on, as its policy allows", object.name(), batch.pageNumber(),
                    batch.pageCount(), batch.batchId(), batch.changes().size(), destination.name(), letter.id());
            result.pages++;
            result.deadLettered++;
            return;
        }
        if (config.deadLetters() != null) {
            // Blocked: the letter records the failure (updated, never duplicated, while the same page is refused);
            // it is resolved once the destination's position passes the page.
            config.deadLetters().record(DeadLetter.of(batch, destination.name(), last, config.clock().instant()));
            blockedLetters.recorded(object.name(), destination.name(), batch);
        }
        result.blocked = TidemarkException.forObject(ErrorCode.DESTINATION_FAILED, object.name(),
                "destination '" + destination.name() + "' refused page " + batch.pageNumber() + "/"
                        + batch.pageCount() + " of " + batch.batchId() + " after " + attempts
                        + (attempts == 1 ? " attempt" : " attempts") + ": " + last
                        + ". Its position stays at " + batch.fromVersion()
                        + " and the same changes will be offered to it again.", last);
    }

    /** A destination's position moved: the letters recorded while it was blocked on those changes are resolved. */
    void moved(TrackedObject object, String destination, long position) {
        blockedLetters.passed(config.deadLetters(), object.name(), destination, position);
    }

    /** Full jitter: a wait drawn uniformly between zero and the bound. */
    private static Duration jittered(Duration bound) {
        long nanos = bound.toNanos();
        return nanos <= 0 ? Duration.ZERO : Duration.ofNanos(ThreadLocalRandom.current().nextLong(nanos + 1));
    }

    private void sleep(TrackedObject object, Duration wait) {
        if (wait.isZero() || wait.isNegative()) {
            return;
        }
        try {
            Thread.sleep(wait.toMillis(), wait.toNanosPart() % 1_000_000);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw cancelled(object, e);
        }
    }

    private void checkNotCancelled(TrackedObject object) {
        if (calls.isCancelled() || Thread.currentThread().isInterrupted()) {
            throw cancelled(object, null);
        }
        // With coordination: a holder paused past its lease stops here, before the page or the attempt.
        Fences.checkStillHeld(object.name());
    }

    private static String key(TrackedObject object, NamedDestination destination) {
        return object.name() + '\u0000' + destination.name();
    }

    private static TidemarkException cancelled(TrackedObject object, Throwable cause) {
        return TidemarkException.forObject(ErrorCode.ENGINE_STATE, object.name(),
                "delivery was cancelled because the engine is closing; the positions stay and the changes will"
                        + " be offered again", cause);
    }

    /** What a delivery did for one destination. */
    static final class Result {
        /** Pages accepted or dead-lettered. */
        int pages;
        int deadLettered;
        /** Why it blocked; null when it took (or set aside) every page. */
        TidemarkException blocked;
    }
}
