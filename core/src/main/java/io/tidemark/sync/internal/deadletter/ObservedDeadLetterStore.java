package io.tidemark.sync.internal.deadletter;

import io.tidemark.sync.CheckReport;
import io.tidemark.sync.spi.DeadLetter;
import io.tidemark.sync.spi.DeadLetterStore;
import io.tidemark.sync.spi.SyncListener;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.time.Instant;
import java.util.List;
import java.util.Optional;

/**
 * The engine's view of the configured store: every letter recorded is also announced to the listeners
 * ({@link SyncListener#onDeadLetter}), wherever in the engine it was recorded. Everything else is passed through.
 */
public final class ObservedDeadLetterStore implements DeadLetterStore {

    private static final Logger LOG = LoggerFactory.getLogger(ObservedDeadLetterStore.class);

    private final DeadLetterStore store;
    private final List<SyncListener> listeners;

    private ObservedDeadLetterStore(DeadLetterStore store, List<SyncListener> listeners) {
        this.store = store;
        this.listeners = List.copyOf(listeners);
    }

    /** {@code store} announcing to {@code listeners}; null stays null (no store configured). */
    public static DeadLetterStore of(DeadLetterStore store, List<SyncListener> listeners) {
        return store == null ? null : new ObservedDeadLetterStore(store, listeners);
    }

    @Override
    public DeadLetter record(DeadLetter letter) {
        DeadLetter stored = store.record(letter);
        for (SyncListener listener : listeners) {
            try {
                listener.onDeadLetter(stored);
            } catch (RuntimeException e) {
                LOG.warn("[{}] a listener failed on dead letter {}: {}", stored.objectName(), stored.id(),
                        e.toString());
            }
        }
        return stored;
    }

    @Override
    public List<DeadLetter> list(String objectName) {
        return store.list(objectName);
    }

    @Override
    public List<DeadLetter> list(String objectName, String destination) {
        return store.list(objectName, destination);
    }

    @Override
    public Optional<DeadLetter> find(long id) {
        return store.find(id);
    }

    @Override
    public Optional<DeadLetter> claim(long id, String claimant, Instant now, Instant until) {
        return store.claim(id, claimant, now, until);
    }

    @Override
    public List<DeadLetter> claimNext(String objectName, String destination, String claimant, Instant now,
                                      Instant until, int limit) {
        return store.claimNext(objectName, destination, claimant, now, until, limit);
    }

    @Override
    public boolean resolve(long id, String claimant) {
        return store.resolve(id, claimant);
    }

    @Override
    public boolean resolve(String objectName, String destination, String idempotencyKey) {
        return store.resolve(objectName, destination, idempotencyKey);
    }

    @Override
    public boolean release(long id, String claimant) {
        return store.release(id, claimant);
    }

    @Override
    public boolean releaseFailed(long id, String claimant, DeadLetter.Failure failure) {
        return store.releaseFailed(id, claimant, failure);
    }

    @Override
    public boolean delete(long id) {
        return store.delete(id);
    }

    @Override
    public int purge(Instant olderThan) {
        return store.purge(olderThan);
    }

    @Override
    public List<CheckReport.Problem> check() {
        return store.check();
    }
}
