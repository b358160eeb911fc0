package io.tidemark.sync.spi;

import io.tidemark.sync.Diagnostic;
import io.tidemark.sync.ObjectReport;

/**
 * Observes the engine: a report after each object's cycle and each diagnostic a provider raised. Called on the
 * poller's thread; keep it quick and do not throw (what it throws is logged and ignored).
 */
public interface SyncListener {

    default void onReport(ObjectReport report) {
    }

    default void onDiagnostic(String objectName, Diagnostic diagnostic) {
    }
}
