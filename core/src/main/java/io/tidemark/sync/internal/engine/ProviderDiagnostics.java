package io.tidemark.sync.internal.engine;

import io.tidemark.sync.Diagnostic;
import io.tidemark.sync.TrackedObject;
import io.tidemark.sync.spi.ChangeProvider;
import org.slf4j.Logger;

import java.util.List;
import java.util.OptionalLong;

/**
 * The provider's checks after each call of an object's procedure (SQL Server: a position older than Change Tracking
 * keeps), shared by the engine and the Kafka Connect source connector: a failing check is logged, never fails the
 * call, and every diagnostic above {@code INFO} is logged under the caller's logger.
 */
public final class ProviderDiagnostics {

    private ProviderDiagnostics() {
    }

    /** Runs the provider's diagnostics for the object at {@code version}; an empty list when they fail. */
    public static List<Diagnostic> run(ChangeProvider provider, TrackedObject object, OptionalLong version,
                                       Logger log) {
        List<Diagnostic> diagnostics;
        try {
            diagnostics = provider.diagnose(object, version);
        } catch (RuntimeException e) {
            log.warn("[{}] provider diagnostics failed: {}", object.name(), e.toString());
            return List.of();
        }
        for (Diagnostic d : diagnostics) {
            if (d.severity() != Diagnostic.Severity.INFO) {
                log.warn("[{}] {}", object.name(), d);
            }
        }
        return diagnostics;
    }
}
