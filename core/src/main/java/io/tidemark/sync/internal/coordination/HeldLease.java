package io.tidemark.sync.internal.coordination;

import java.time.Clock;
import java.time.Instant;
import java.util.Optional;
import java.util.concurrent.atomic.AtomicReference;
import java.util.function.Predicate;

/**
 * A lease this instance holds on one object: its epoch (the fencing token every write carries) and the local
 * deadline after which the holder no longer trusts it: the start of the last successful renewal plus the lease
 * duration minus a safety margin. The database decides who holds a lease; this deadline only makes a paused or
 * partitioned holder stop before the database could have given the lease to someone else.
 */
public final class HeldLease {

    private final String objectName;
    private final String holder;
    private final long epoch;
    private final Clock clock;
    private volatile Instant deadline;
    private volatile boolean lost;
    /** Records a page in flight on the lease row, fenced; false when the lease was lost. */
    private final Predicate<InFlightPage> recorder;
    /** The page in flight the previous holder recorded, until this holder's first cycle takes it. */
    private final AtomicReference<InFlightPage> inherited;

    public HeldLease(String objectName, String holder, long epoch, Clock clock, Instant deadline) {
        this(objectName, holder, epoch, clock, deadline, page -> true, null);
    }

    public HeldLease(String objectName, String holder, long epoch, Clock clock, Instant deadline,
                     Predicate<InFlightPage> recorder, InFlightPage inherited) {
        this.objectName = objectName;
        this.holder = holder;
        this.epoch = epoch;
        this.clock = clock;
        this.deadline = deadline;
        this.recorder = recorder;
        this.inherited = new AtomicReference<>(inherited);
    }

    /** Records {@code page} as the one about to be delivered; false when the database says the lease was lost. */
    boolean record(InFlightPage page) {
        return recorder.test(page);
    }

    /** The page in flight the previous holder left, once: the first cycle under this lease takes it. */
    Optional<InFlightPage> takeInherited() {
        return Optional.ofNullable(inherited.getAndSet(null));
    }

    /** Gives {@code page} back when the cycle that took it failed before settling it, unless one came since. */
    void restoreInherited(InFlightPage page) {
        inherited.compareAndSet(null, page);
    }

    public String objectName() {
        return objectName;
    }

    public String holder() {
        return holder;
    }

    public long epoch() {
        return epoch;
    }

    /** Still held as far as this instance can tell: not lost, and its local deadline not passed. */
    public boolean valid() {
        return !lost && clock.instant().isBefore(deadline);
    }

    Instant deadline() {
        return deadline;
    }

    void renewed(Instant newDeadline) {
        this.deadline = newDeadline;
    }

    /** The database said no: the lease is gone for good (a new acquisition is a new lease, with a new epoch). */
    public void markLost() {
        this.lost = true;
    }

    boolean lost() {
        return lost;
    }

    @Override
    public String toString() {
        return "lease on '" + objectName + "' held by " + holder + " at epoch " + epoch;
    }
}
