package io.tidemark.sync.testkit;

import io.tidemark.sync.Change;
import io.tidemark.sync.ChangeBatch;
import io.tidemark.sync.spi.Destination;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.function.Predicate;

/**
 * A destination that keeps every batch it accepts and can be told to refuse. Core's own copy of the testing
 * module's {@code RecordingDestination}, which core's tests cannot depend on (the testing module depends on
 * core). Thread-safe; waiting blocks on the monitor.
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
            throw new IllegalStateException("RecordingDestination refused " + batch);
        }
        batches.add(batch);
        notifyAll();
    }

    /** Refuses every batch the predicate matches from now on. */
    public synchronized RecordingDestination refuseWhen(Predicate<ChangeBatch> predicate) {
        this.refuse = predicate;
        return this;
    }

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

    public synchronized void clear() {
        batches.clear();
        offered = 0;
    }

    /** Waits until at least {@code count} changes were accepted and returns them all; fails on timeout. */
    public synchronized List<Change> awaitChanges(int count, Duration timeout) throws InterruptedException {
        long deadline = System.nanoTime() + timeout.toNanos();
        while (changes().size() < count) {
            long left = deadline - System.nanoTime();
            if (left <= 0) {
                throw new AssertionError("Expected at least " + count + " changes within " + timeout + " but got "
                        + changes().size() + " in " + batches.size() + " batches");
            }
            wait(Math.max(1, left / 1_000_000));
        }
        return changes();
    }
}
