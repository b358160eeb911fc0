package io.tidemark.sync.spi;

import io.tidemark.sync.ChangeBatch;
import io.tidemark.sync.Diagnostic;
import io.tidemark.sync.ObjectReport;

import java.time.Duration;
import java.time.Instant;
import java.util.Optional;
import java.util.OptionalLong;

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

    // ---- Signals (live reconfiguration and signals): per destination delivery latency and failures ----

    /**
     * One attempt to hand a page to a destination, on the cycle's thread right after the destination's
     * {@link Destination#deliver} returned or threw: {@code failure} is null when it accepted the page, else what it
     * threw (its policy then retries, dead-letters or blocks).
     *
     * @param took how long the destination's {@code deliver} took
     */
    default void onDelivery(String objectName, String destination, ChangeBatch page, Duration took,
                            Exception failure) {
    }

    /**
     * After each cycle that was not skipped as paused: where the object stands.
     *
     * @param watermark      the object's watermark after the cycle; empty before its first one
     * @param versionsBehind the provider's current version minus the watermark, where the provider can tell
     *                       ({@link ChangeProvider#currentVersion}, read at most every 10 seconds); empty otherwise
     * @param lastMovedAt    when the watermark last moved; empty when it never has
     */
    default void onPosition(String objectName, OptionalLong watermark, OptionalLong versionsBehind,
                            Optional<Instant> lastMovedAt) {
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
