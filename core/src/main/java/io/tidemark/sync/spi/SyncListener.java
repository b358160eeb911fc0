package io.tidemark.sync.spi;

import io.tidemark.sync.Diagnostic;
import io.tidemark.sync.ObjectReport;

/**
 * Observes the engine: a report after each object's cycle, each diagnostic a provider raised, and each dead letter
 * recorded. Called on the poller's thread; keep it quick and do not throw (what it throws is logged and ignored).
 */
public interface SyncListener {

    default void onReport(ObjectReport report) {
    }

    default void onDiagnostic(String objectName, Diagnostic diagnostic) {
    }

    /**
     * A destination refused a page until its policy ran out of attempts and the page was recorded as a dead
     * letter: {@code letter} is the stored letter. {@code letter.attempts() == 1} for a new letter; more when the
     * same page was refused again (a blocked destination is offered it every cycle) and its letter was updated.
     */
    default void onDeadLetter(DeadLetter letter) {
    }

    // --- coordination (engines on several instances) ----------------------------------------------------

    /** This instance took the object's lease at {@code epoch}; it processes the object from now on. */
    default void onLeaseAcquired(String objectName, String instanceId, long epoch) {
    }

    /**
     * This instance no longer holds the object's lease: it handed it back ({@code lost} false: a fair-share
     * rebalance, or close) or the database no longer granted it ({@code lost} true: it expired or was taken over).
     */
    default void onLeaseReleased(String objectName, String instanceId, long epoch, boolean lost) {
    }
}
