package io.tidemark.sync.internal.deadletter;

import io.tidemark.sync.ChangeBatch;
import io.tidemark.sync.DeadLetters;
import io.tidemark.sync.ErrorCode;
import io.tidemark.sync.ReplayResult;
import io.tidemark.sync.TidemarkException;
import io.tidemark.sync.spi.DeadLetter;
import io.tidemark.sync.spi.DeadLetterStore;
import io.tidemark.sync.spi.Destination;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.UUID;

/**
 * Replays dead letters to the destination that refused them, and nowhere else, under a claim in the store.
 *
 * <p>A replay of a destination claims one letter at a time (its lease starts just before it is sent, so a slow
 * destination cannot outlive it), and resolves an accepted letter only after it has claimed the next one: at no
 * moment does it hold nothing while letters remain, so a concurrent replay of the same destination finds a live
 * claim and cannot overtake it.
 */
public final class DeadLetterReplay implements DeadLetters {

    private static final Logger LOG = LoggerFactory.getLogger(DeadLetterReplay.class);

    private final String engineName;
    private final DeadLetterStore store;
    private final Map<String, Destination> destinations;
    private final Clock clock;

    /**
     * @param store        the engine's store; null when none is configured (every call then explains how to add one)
     * @param destinations the engine's destinations by name
     */
    public DeadLetterReplay(String engineName, DeadLetterStore store, Map<String, Destination> destinations,
                            Clock clock) {
        this.engineName = engineName;
        this.store = store;
        this.destinations = Map.copyOf(destinations);
        this.clock = clock;
    }

    private DeadLetterStore store() {
        if (store == null) {
            throw new TidemarkException(ErrorCode.INVALID_CONFIGURATION, "The engine '" + engineName + "' has no"
                    + " dead-letter store: add builder.deadLetters(JdbcDeadLetterStore.create(dataSource)) or"
                    + " InMemoryDeadLetterStore.create()");
        }
        return store;
    }

    private Destination destination(String objectName, String name) {
        Destination destination = destinations.get(name);
        if (destination == null) {
            throw TidemarkException.forObject(ErrorCode.UNKNOWN_DESTINATION, objectName, "the engine '" + engineName
                    + "' has no destination named '" + name + "' (it has " + destinations.keySet().stream().sorted()
                    .toList() + "); dead letters are replayed only to the destination that refused them. Add it"
                    + " back, or discard the letters");
        }
        return destination;
    }

    private String newClaimant() {
        return engineName + "/" + UUID.randomUUID();
    }

    @Override
    public List<DeadLetter> list(String objectName) {
        return store().list(Objects.requireNonNull(objectName, "objectName"));
    }

    @Override
    public List<DeadLetter> list(String objectName, String destination) {
        return store().list(Objects.requireNonNull(objectName, "objectName"),
                Objects.requireNonNull(destination, "destination"));
    }

    @Override
    public ReplayResult replay(long letterId) {
        DeadLetterStore letters = store();
        String claimant = newClaimant();
        Instant now = clock.instant();
        Optional<DeadLetter> claimed = letters.claim(letterId, claimant, now, now.plus(CLAIM_LEASE));
        if (claimed.isEmpty()) {
            boolean stored = letters.find(letterId).isPresent();
            return new ReplayResult(0, 0, stored, Optional.empty());
        }
        DeadLetter letter = claimed.get();
        Destination destination = destinationOrRelease(letter, claimant);
        Optional<String> refusal = send(letter, destination, claimant);
        return refusal.map(error -> new ReplayResult(0, 1, false, Optional.of(error)))
                .orElseGet(() -> {
                    letters.resolve(letter.id(), claimant);
                    return new ReplayResult(1, 0, false, Optional.empty());
                });
    }

    @Override
    public ReplayResult replayAll(String objectName, String destinationName) {
        Objects.requireNonNull(objectName, "objectName");
        DeadLetterStore letters = store();
        Destination destination = destination(objectName, Objects.requireNonNull(destinationName, "destination"));
        String claimant = newClaimant();
        int delivered = 0;
        DeadLetter accepted = null;
        try {
            while (true) {
                Instant now = clock.instant();
                List<DeadLetter> next = letters.claimNext(objectName, destinationName, claimant, now,
                        now.plus(CLAIM_LEASE), 1);
                // Resolved only now that the next one is claimed: no gap in which another replay could overtake.
                if (accepted != null) {
                    letters.resolve(accepted.id(), claimant);
                    accepted = null;
                }
                if (next.isEmpty()) {
                    boolean elsewhere = delivered == 0 && !letters.list(objectName, destinationName).isEmpty();
                    return new ReplayResult(delivered, 0, elsewhere, Optional.empty());
                }
                DeadLetter letter = next.get(0);
                Optional<String> refusal = send(letter, destination, claimant);
                if (refusal.isPresent()) {
                    return new ReplayResult(delivered, 1, false, refusal);
                }
                delivered++;
                accepted = letter;
            }
        } finally {
            if (accepted != null) {
                letters.resolve(accepted.id(), claimant);
            }
        }
    }

    private Destination destinationOrRelease(DeadLetter letter, String claimant) {
        try {
            return destination(letter.objectName(), letter.destination());
        } catch (TidemarkException e) {
            store.release(letter.id(), claimant);
            throw e;
        }
    }

    /**
     * Offers the letter's page to its destination once. Empty when accepted; otherwise the refusal, recorded on the
     * letter (which is released). An unreadable envelope releases the letter and is thrown.
     */
    private Optional<String> send(DeadLetter letter, Destination destination, String claimant) {
        ChangeBatch page;
        try {
            page = EnvelopeReader.page(letter);
        } catch (TidemarkException e) {
            store.release(letter.id(), claimant);
            throw e;
        }
        try {
            destination.deliver(page);
            LOG.info("[{}] dead letter {} (page {}/{} of {}) replayed to destination '{}'", letter.objectName(),
                    letter.id(), letter.pageNumber(), letter.pageCount(), letter.batchId(), letter.destination());
            return Optional.empty();
        } catch (Exception e) {
            if (e instanceof InterruptedException) {
                Thread.currentThread().interrupt();
            }
            store.releaseFailed(letter.id(), claimant, DeadLetter.Failure.of(e, clock.instant()));
            LOG.warn("[{}] destination '{}' refused the replay of dead letter {}: {}", letter.objectName(),
                    letter.destination(), letter.id(), e.toString());
            return Optional.of(String.valueOf(e));
        }
    }

    @Override
    public boolean discard(long letterId) {
        return store().delete(letterId);
    }

    @Override
    public int purge(Duration retention) {
        Objects.requireNonNull(retention, "retention");
        if (retention.isNegative()) {
            throw new TidemarkException(ErrorCode.INVALID_CONFIGURATION, "purge(retention) needs a retention of zero"
                    + " or more, got " + retention);
        }
        return purge(clock.instant().minus(retention));
    }

    @Override
    public int purge(Instant olderThan) {
        int purged = store().purge(Objects.requireNonNull(olderThan, "olderThan"));
        if (purged > 0) {
            LOG.info("Engine '{}' purged {} dead letters whose last failure was before {}", engineName, purged,
                    olderThan);
        }
        return purged;
    }
}
