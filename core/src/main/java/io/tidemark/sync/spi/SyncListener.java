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
}
