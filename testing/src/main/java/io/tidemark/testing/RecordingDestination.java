package io.tidemark.testing;

import io.tidemark.sync.Change;
import io.tidemark.sync.ChangeBatch;
import io.tidemark.sync.spi.Destination;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.function.Predicate;

/**
 * A destination that keeps every batch it accepts, for assertions. It can be told to refuse batches, to test
 * what the engine does when a destination fails. Thread-safe; waiting methods block on a monitor, not on sleeps.
 *
 * <pre>{@code
 * RecordingDestination recorder = new RecordingDestination();
 * engine = SyncEngine.builder()....destination("test", recorder).build();
 * engine.start();
 * recorder.awaitChanges(3, Duration.ofSeconds(10));
 * }</pre>
 */
public final class RecordingDestination implements Destination {

    private final List<ChangeBatch> batches = new ArrayList<>();
    private Predicate<ChangeBatch> refuse = batch -> false;
    private int offered;

    @Override
    public synchronized void deliver(ChangeBatch batch) {
        offered++;
        notifyAll();
        if (refuse.test(batch)) {
            throw new RefusedException("RecordingDestination refused " + batch);
        }
        batches.add(batch);
        notifyAll();
    }

    /** Refuses every batch the predicate matches from now on; {@code batch -> false} accepts everything again. */
    public synchronized RecordingDestination refuseWhen(Predicate<ChangeBatch> predicate) {
        this.refuse = predicate;
        return this;
    }

    /** Refuses everything until {@link #acceptAll()}. */
    public RecordingDestination refuseAll() {
        return refuseWhen(batch -> true);
    }

    public RecordingDestination acceptAll() {
        return refuseWhen(batch -> false);
    }

    /** The accepted batches, in order. */
    public synchronized List<ChangeBatch> batches() {
        return List.copyOf(batches);
    }

    /** Every accepted change, in order. */
    public synchronized List<Change> changes() {
        List<Change> all = new ArrayList<>();
        batches.forEach(b -> all.addAll(b.changes()));
        return all;
    }

    /** How many times the engine called {@link #deliver}, accepted or refused. */
    public synchronized int offered() {
        return offered;
    }

    /**
     * Waits until the engine has called {@link #deliver} at least {@code count} times, accepted or refused, or the
     * timeout passes; returns how many times it had by then. To check that something does <em>not</em> happen,
     * ask for one call more than expected and compare the answer.
     */
    public synchronized int awaitOffered(int count, Duration timeout) throws InterruptedException {
        long deadline = System.nanoTime() + timeout.toNanos();
        while (offered < count) {
            long left = deadline - System.nanoTime();
            if (left <= 0) {
                break;
            }
            wait(Math.max(1, left / 1_000_000));
        }
        return offered;
    }

    public synchronized void clear() {
        batches.clear();
        offered = 0;
    }

    /**
     * Waits until at least {@code count} changes were accepted, and returns them all.
     *
     * @throws AssertionError when the timeout passes first, with what did arrive
     */
    public synchronized List<Change> awaitChanges(int count, Duration timeout) throws InterruptedException {
        long deadline = System.nanoTime() + timeout.toNanos();
        while (changeCount() < count) {
            long left = deadline - System.nanoTime();
            if (left <= 0) {
                throw new AssertionError("Expected at least " + count + " changes within " + timeout + " but got "
                        + changeCount() + " in " + batches.size() + " batches"
                        + (batches.isEmpty() ? "" : "; the last: " + batches.subList(Math.max(0, batches.size() - 3),
                        batches.size())));
            }
            wait(Math.max(1, left / 1_000_000));
        }
        return changes();
    }

    private int changeCount() {
        int n = 0;
        for (ChangeBatch b : batches) {
            n += b.changes().size();
        }
        return n;
    }

    /** What {@link RecordingDestination} throws when told to refuse. */
    public static final class RefusedException extends RuntimeException {
        private static final long serialVersionUID = 1L;

        RefusedException(String message) {
            super(message);
        }
    }
}
