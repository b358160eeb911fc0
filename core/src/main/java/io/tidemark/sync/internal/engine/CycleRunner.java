package io.tidemark.sync.internal.engine;

import io.tidemark.sync.Diagnostic;
import io.tidemark.sync.ErrorCode;
import io.tidemark.sync.InitialSync;
import io.tidemark.sync.ObjectReport;
import io.tidemark.sync.Outcome;
import io.tidemark.sync.SyncEngine;
import io.tidemark.sync.TidemarkException;
import io.tidemark.sync.TrackedObject;
import io.tidemark.sync.internal.contract.ResponseScanner;
import io.tidemark.sync.internal.contract.ResponseSummary;
import io.tidemark.sync.internal.store.WatermarkConflicts;
import io.tidemark.sync.spi.CallContext;
import io.tidemark.sync.spi.ChangeProvider;
import io.tidemark.sync.spi.ChangeRequest;
import io.tidemark.sync.spi.ResponsePayload;
import io.tidemark.sync.spi.SyncListener;
import io.tidemark.sync.spi.WatermarkState;
import io.tidemark.sync.spi.WatermarkStore;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.OptionalLong;
import java.util.concurrent.ConcurrentHashMap;

/**
 * One cycle of one object, following the version rules:
 * <ol>
 *   <li>no stored watermark is not 0: the first cycle follows the object's {@link InitialSync} (a FULL one
 *       says {@code "initial":true}); a stored 0 is asked for as {@code fromVersion: 0} like any other;</li>
 *   <li>an incremental first cycle records the server's (or the seeding procedure's) version and delivers
 *       nothing, discarding seed rows with a warning;</li>
 *   <li>after success the highest {@code $version} is stored, else {@code Metadata.Sync.Version};</li>
 *   <li>it is stored only after every destination accepted every page;</li>
 *   <li>never backwards, written with compare-and-set;</li>
 *   <li>a bad response fails the cycle before anything is delivered;</li>
 *   <li>{@code Type} and {@code ReasonCode} travel with each batch;</li>
 *   <li>the response is read as a stream and delivered in bounded pages;</li>
 *   <li>a version is only continued by the procedure that produced it: a stored identity that differs from
 *       the object's fails the cycle before the procedure is called.</li>
 * </ol>
 */
final class CycleRunner {

    /** Logged under the engine's name, where users look for it. */
    private static final Logger LOG = LoggerFactory.getLogger(SyncEngine.class);

    private final EngineConfig config;
    private final CallContext calls;
    private final PageDelivery delivery;
    /**
     * When each object's last cycle ran, kept here rather than written per poll: an idle object writes nothing
     * to the store (a write per poll per object would cost a transaction, and on PostgreSQL a transaction id).
     */
    private final Map<String, Instant> lastPolled = new ConcurrentHashMap<>();
    /** The error each object's row is known to hold (as last read or written), so an unchanged one is not rewritten. */
    private final Map<String, String> storedErrors = new ConcurrentHashMap<>();

    CycleRunner(EngineConfig config, CallContext calls) {
        this.config = config;
        this.calls = calls;
        this.delivery = new PageDelivery(config, calls);
    }

    /** When this engine last ran a cycle of the object (in memory; the store is not written per poll). */
    Optional<Instant> lastPolled(String objectName) {
        return Optional.ofNullable(lastPolled.get(objectName));
    }

    ObjectReport run(TrackedObject object) {
        Instant startedAt = config.clock().instant();
        long started = System.nanoTime();
        ObjectReport.Builder report = ObjectReport.builder(object.name(), startedAt);
        WatermarkStore store = config.watermarks();
        OptionalLong stored = OptionalLong.empty();
        OptionalLong after = OptionalLong.empty();
        lastPolled.put(object.name(), startedAt);
        try {
            Optional<WatermarkState> state = store.load(object.name());
            rememberStoredError(object.name(), state.flatMap(WatermarkState::lastError).orElse(null));
            stored = state.map(WatermarkState::version).orElse(OptionalLong.empty());
            report.fromVersion(stored).toVersion(stored);
            after = stored;
            if (state.isPresent() && state.get().paused()) {
                return finish(report.outcome(Outcome.PAUSED), started);
            }
            String source = config.sourceIdentity(object);
            checkSource(object, state, stored, source);
            if (stored.isEmpty() && object.initialSync() == InitialSync.INCREMENTAL) {
                after = OptionalLong.of(seed(object, source, report));
            } else {
                boolean adopt = stored.isPresent() && state.get().source().isEmpty();
                after = OptionalLong.of(sync(object, source, adopt, stored, report));
            }
        } catch (TidemarkException e) {
            fail(object, report, e);
        } catch (RuntimeException e) {
            fail(object, report, TidemarkException.forObject(ErrorCode.INTERNAL, object.name(),
                    "the cycle failed unexpectedly: " + e, e));
        }
        report.diagnostics(diagnose(object, after));
        return finish(report, started);
    }

    /**
     * Fails closed when the stored version was produced by another procedure than the one the object calls now:
     * continuing would ask the new procedure for changes after someone else's position.
     */
    private static void checkSource(TrackedObject object, Optional<WatermarkState> state, OptionalLong stored,
                                    String source) {
        Optional<String> storedSource = state.flatMap(WatermarkState::source);
        if (stored.isPresent() && storedSource.isPresent() && !storedSource.get().equals(source)) {
            throw WatermarkConflicts.sourceChanged(object.name(), stored, storedSource.get(), source);
        }
    }

    /** Returns the version stored. */
    private long seed(TrackedObject object, String source, ObjectReport.Builder report) {
        ChangeProvider provider = config.provider();
        OptionalLong server = provider.currentVersion(object);
        long version;
        if (server.isPresent()) {
            version = server.getAsLong();
        } else {
            try (ResponsePayload payload = provider.invoke(object, ChangeRequest.seed(), calls)) {
                ResponseSummary summary = ResponseScanner.scan(object.name(), payload);
                report.changeCount(summary.rowCount()).sync(summary.syncType(), summary.reasonCode());
                if (summary.rowCount() > 0) {
                    String warning = "returned " + summary.rowCount()
                            + " rows during an incremental seed; discarding them";
                    LOG.warn("[{}] procedure {} {}. Return no rows when mode is \"seed\", or use InitialSync.FULL"
                            + " if the history was wanted.", object.name(), object.procedure(), warning);
                    report.warning(warning);
                }
                version = summary.metadataVersion();
            }
        }
        advance(object, source, OptionalLong.empty(), version, config.clock().instant());
        report.outcome(Outcome.SEEDED).toVersion(OptionalLong.of(version));
        LOG.info("[{}] seeded at version {}; changes after it will be delivered", object.name(), version);
        return version;
    }

    /**
     * Returns the version stored (unchanged when nothing moved). {@code adopt}: the stored version has no source
     * yet (written before sources were recorded), so even an unchanged version is written, with the source.
     */
    private long sync(TrackedObject object, String source, boolean adopt, OptionalLong stored,
                      ObjectReport.Builder report) {
        long from = stored.orElse(0L);
        ChangeRequest request = stored.isEmpty()
                ? ChangeRequest.initialFull(object.maxRows())
                : ChangeRequest.sync(from, object.maxRows());
        try (ResponsePayload payload = config.provider().invoke(object, request, calls)) {
            ResponseSummary summary = ResponseScanner.scan(object.name(), payload);
            long next = summary.versionToStore();
            if (stored.isPresent() && next < stored.getAsLong()) {
                throw TidemarkException.forObject(ErrorCode.WATERMARK_REGRESSION, object.name(),
                        "the response would move the watermark back from " + stored.getAsLong() + " to " + next
                                + " (highest $version " + describe(summary.highestRowVersion())
                                + ", Metadata.Sync.Version " + summary.metadataVersion() + "); refusing it. A"
                                + " procedure whose versions can go down must be fixed (docs/contract.md, what a"
                                + " version has to be). " + WatermarkConflicts.regressionAdvice(object.name()));
            }
            report.sync(summary.syncType(), summary.reasonCode())
                    .changeCount(summary.rowCount())
                    .fullBatch(object.maxRows().isPresent() && summary.rowCount() >= object.maxRows().getAsInt());
            Instant now;
            if (summary.rowCount() == 0) {
                now = config.clock().instant();
                if (stored.isEmpty() || next != stored.getAsLong() || adopt) {
                    advance(object, source, stored, next, now);
                } else if (storedErrors.containsKey(object.name())) {
                    // Nothing moved: nothing to write, except to clear the error a failed cycle left.
                    config.watermarks().recordPoll(object.name(), now, null);
                    storedErrors.remove(object.name());
                }
                report.outcome(Outcome.NO_CHANGES).toVersion(OptionalLong.of(next));
                LOG.debug("[{}] no changes after {}; version now {}", object.name(), from, next);
                return next;
            }
            PageDelivery.Result result = delivery.deliver(object, payload, summary, from);
            now = config.clock().instant();
            advance(object, source, stored, next, now);
            report.outcome(Outcome.DELIVERED)
                    .toVersion(OptionalLong.of(next))
                    .pageCount(result.pages)
                    .deadLetteredPages(result.deadLettered);
            LOG.debug("[{}] delivered {} changes ({} pages, {} reason {}) from {} to {}", object.name(),
                    summary.rowCount(), result.pages, summary.syncType(), summary.reasonCode(), from, next);
            return next;
        }
    }

    /** Stores the version; the store clears the row's error with it. */
    private void advance(TrackedObject object, String source, OptionalLong expected, long version, Instant at) {
        config.watermarks().advance(object.name(), source, expected, version, at);
        storedErrors.remove(object.name());
    }

    private void rememberStoredError(String objectName, String error) {
        if (error == null) {
            storedErrors.remove(objectName);
        } else {
            storedErrors.put(objectName, error);
        }
    }

    private void fail(TrackedObject object, ObjectReport.Builder report, TidemarkException e) {
        Outcome outcome = e.code() == ErrorCode.DESTINATION_FAILED ? Outcome.BLOCKED : Outcome.FAILED;
        report.outcome(outcome).error(e);
        // Logged by the engine's FailureLog, once per cycle and with the time of the next attempt.
        String error = e.code() + ": " + e.getMessage();
        if (error.equals(storedErrors.get(object.name()))) {
            return; // the row says so already: an object failing the same way writes nothing per cycle
        }
        try {
            config.watermarks().recordPoll(object.name(), config.clock().instant(), error);
            storedErrors.put(object.name(), error);
        } catch (RuntimeException storeFailure) {
            if (isUnreachable(e) && isUnreachable(storeFailure)) {
                // The same outage (the store usually lives in the same database): the failure's line says it all.
                LOG.debug("[{}] could not record the failure in the watermark store: {}", object.name(),
                        storeFailure.toString());
            } else {
                LOG.warn("[{}] could not record the failure in the watermark store: {}", object.name(),
                        storeFailure.toString());
            }
        }
    }

    private static boolean isUnreachable(RuntimeException e) {
        return e instanceof TidemarkException && ((TidemarkException) e).code() == ErrorCode.CONNECTION_FAILED;
    }

    private List<Diagnostic> diagnose(TrackedObject object, OptionalLong version) {
        List<Diagnostic> diagnostics;
        try {
            diagnostics = config.provider().diagnose(object, version);
        } catch (RuntimeException e) {
            LOG.warn("[{}] provider diagnostics failed: {}", object.name(), e.toString());
            return List.of();
        }
        for (Diagnostic d : diagnostics) {
            if (d.severity() != Diagnostic.Severity.INFO) {
                LOG.warn("[{}] {}", object.name(), d);
            }
            for (SyncListener listener : config.listeners()) {
                try {
                    listener.onDiagnostic(object.name(), d);
                } catch (RuntimeException e) {
                    LOG.warn("[{}] a listener failed on a diagnostic: {}", object.name(), e.toString());
                }
            }
        }
        return diagnostics;
    }

    private ObjectReport finish(ObjectReport.Builder builder, long startedNanos) {
        ObjectReport report = builder.duration(Duration.ofNanos(System.nanoTime() - startedNanos)).build();
        for (SyncListener listener : config.listeners()) {
            try {
                listener.onReport(report);
            } catch (RuntimeException e) {
                LOG.warn("[{}] a listener failed on a report: {}", report.objectName(), e.toString());
            }
        }
        return report;
    }

    private static String describe(OptionalLong v) {
        return v.isPresent() ? Long.toString(v.getAsLong()) : "none";
    }
}
