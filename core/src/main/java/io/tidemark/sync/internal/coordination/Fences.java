package io.tidemark.sync.internal.coordination;

import io.tidemark.sync.ErrorCode;
import io.tidemark.sync.TidemarkException;

import java.util.Optional;
import java.util.function.Supplier;

/**
 * The lease a cycle runs under, bound to the cycle's thread for the cycle's length. The JDBC stores read it to
 * fence their writes (their SPI methods stay as they are: a cycle's store writes all happen on its thread), and
 * delivery reads it before each page.
 */
public final class Fences {

    private static final ThreadLocal<HeldLease> CURRENT = new ThreadLocal<>();

    private Fences() {
    }

    /** The lease the current thread's cycle holds on {@code objectName}, if it runs under one. */
    public static Optional<HeldLease> current(String objectName) {
        HeldLease lease = CURRENT.get();
        return lease != null && lease.objectName().equals(objectName) ? Optional.of(lease) : Optional.empty();
    }

    /** Runs {@code work} with {@code lease} bound to this thread: its store writes on the lease's object are fenced. */
    public static <T> T under(HeldLease lease, java.util.function.Supplier<T> work) {
        HeldLease outer = CURRENT.get();
        CURRENT.set(lease);
        try {
            return work.get();
        } finally {
            if (outer == null) {
                CURRENT.remove();
            } else {
                CURRENT.set(outer);
            }
        }
    }

    /**
     * Before a page is delivered: fails with {@code LEASE_LOST} when the cycle runs under a lease that was lost or
     * whose local deadline passed, so a holder that was paused past its lease delivers nothing more.
     */
    public static void checkStillHeld(String objectName) {
        Optional<HeldLease> lease = current(objectName);
        if (lease.isPresent() && !lease.get().valid()) {
            throw lost(lease.get(), "its lease " + (lease.get().lost() ? "was lost" : "may have expired")
                    + " before the next page was delivered; nothing more is delivered by this instance");
        }
    }

    /**
     * Before a page is offered, when the cycle runs under a lease: records the page on the lease row (fenced), so
     * that an instance taking the object over after a failover delivers it again under the same key. Fails with
     * {@code LEASE_LOST} when the database says the lease is gone: the page is then not delivered. Without a lease
     * it does nothing and builds nothing.
     */
    public static void recordInFlight(String objectName, Supplier<InFlightPage> page) {
        Optional<HeldLease> lease = current(objectName);
        if (lease.isPresent() && !lease.get().record(page.get())) {
            lease.get().markLost();
            throw lost(lease.get(), "the store refused to record the next page, which was not delivered");
        }
    }

    /**
     * The page in flight the object's previous holder recorded, handed to the first cycle under the current
     * thread's lease only (later cycles get nothing).
     */
    public static Optional<InFlightPage> takeInherited(String objectName) {
        return current(objectName).flatMap(HeldLease::takeInherited);
    }

    /**
     * Hands {@code page} back to the current thread's lease when the cycle that took it failed (the database briefly
     * unreachable, a write refused): the next cycle still delivers it under its key, if the positions still stand
     * where it left them.
     */
    public static void restoreInherited(String objectName, InFlightPage page) {
        current(objectName).ifPresent(lease -> lease.restoreInherited(page));
    }

    /** The error of a write or a delivery refused because {@code lease} is no longer held. */
    public static TidemarkException lost(HeldLease lease, String what) {
        return TidemarkException.forObject(ErrorCode.LEASE_LOST, lease.objectName(), "instance '" + lease.holder()
                + "' no longer holds the object at epoch " + lease.epoch() + ": " + what + ". Another instance"
                + " holds it or will take it over; this instance retries only if it gets the lease again.");
    }
}
