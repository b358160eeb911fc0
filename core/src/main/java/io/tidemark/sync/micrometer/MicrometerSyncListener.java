package io.tidemark.sync.micrometer;

import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.Tags;
import io.micrometer.core.instrument.Timer;
import io.tidemark.sync.Diagnostic;
import io.tidemark.sync.ObjectReport;
import io.tidemark.sync.spi.DeadLetter;
import io.tidemark.sync.spi.SyncListener;

import java.util.Map;
import java.util.Objects;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicLong;

/**
 * Publishes the engine's reports as Micrometer meters. Register it with
 * {@code SyncEngine.builder().listener(MicrometerSyncListener.create(registry))}; Micrometer is an optional
 * dependency of tidemark-core, needed only when this class is used.
 *
 * <ul>
 *   <li>{@code tidemark.cycles} (counter; tags {@code object}, {@code outcome}): cycles by how they ended;</li>
 *   <li>{@code tidemark.cycle.duration} (timer; tag {@code object});</li>
 *   <li>{@code tidemark.changes} (counter; tag {@code object}): changes delivered;</li>
 *   <li>{@code tidemark.dead.letters} (counter; tags {@code object}, {@code destination}): new dead letters, one per
 *       page a destination refused until its policy ran out of attempts;</li>
 *   <li>{@code tidemark.dead.letter.failures} (counter; tags {@code object}, {@code destination}): every time a
 *       letter was recorded, including a page refused again (its letter updated, not duplicated);</li>
 *   <li>{@code tidemark.watermark} (gauge; tag {@code object}): the watermark after the last cycle;</li>
 *   <li>{@code tidemark.diagnostics} (counter; tags {@code object}, {@code code}): provider diagnostics;</li>
 *   <li>{@code tidemark.lease.held} (gauge; tag {@code object}; with coordination): 1 while this instance holds the
 *       object's lease, else 0;</li>
 *   <li>{@code tidemark.lease.handovers} (counter; tags {@code object}, {@code event}; with coordination): leases
 *       this instance took ({@code acquired}), handed back ({@code released}) or lost ({@code lost}).</li>
 * </ul>
 */
public final class MicrometerSyncListener implements SyncListener {

    private final MeterRegistry registry;
    private final Map<String, AtomicLong> watermarks = new ConcurrentHashMap<>();

    private MicrometerSyncListener(MeterRegistry registry) {
        this.registry = Objects.requireNonNull(registry, "registry");
    }

    // "exports": Micrometer is an optional ("requires static") module, so it cannot be required transitively;
    // an application calling this method has Micrometer and requires it itself.
    @SuppressWarnings("exports")
    public static MicrometerSyncListener create(MeterRegistry registry) {
        return new MicrometerSyncListener(registry);
    }

    @Override
    public void onReport(ObjectReport report) {
        Tags object = Tags.of("object", report.objectName());
        Counter.builder("tidemark.cycles").tags(object).tag("outcome", report.outcome().name())
                .description("Sync cycles by outcome").register(registry).increment();
        Timer.builder("tidemark.cycle.duration").tags(object).description("Duration of a sync cycle")
                .register(registry).record(report.duration());
        if (report.outcome() == io.tidemark.sync.Outcome.DELIVERED) {
            Counter.builder("tidemark.changes").tags(object).description("Changes delivered to every destination")
                    .register(registry).increment(report.changeCount());
        }
        report.toVersion().ifPresent(version -> watermarks.computeIfAbsent(report.objectName(), name -> {
            AtomicLong holder = new AtomicLong();
            registry.gauge("tidemark.watermark", Tags.of("object", name), holder, AtomicLong::doubleValue);
            return holder;
        }).set(version));
    }

    /** Counted here, where every letter arrives, rather than from the reports: a blocked page is no report's count. */
    @Override
    public void onDeadLetter(DeadLetter letter) {
        Tags tags = Tags.of("object", letter.objectName(), "destination", letter.destination());
        if (letter.attempts() == 1) {
            Counter.builder("tidemark.dead.letters").tags(tags).description("Pages stored as dead letters")
                    .register(registry).increment();
        }
        Counter.builder("tidemark.dead.letter.failures").tags(tags)
                .description("Dead letters recorded, including pages refused again").register(registry).increment();
    }

    @Override
    public void onDiagnostic(String objectName, Diagnostic diagnostic) {
        Counter.builder("tidemark.diagnostics").tag("object", objectName).tag("code", diagnostic.code())
                .description("Diagnostics raised by the provider").register(registry).increment();
    }

    // --- coordination (engines on several instances) ----------------------------------------------------

    private final Map<String, AtomicLong> leasesHeld = new ConcurrentHashMap<>();

    @Override
    public void onLeaseAcquired(String objectName, String instanceId, long epoch) {
        leaseHeld(objectName).set(1);
        handover(objectName, "acquired");
    }

    @Override
    public void onLeaseReleased(String objectName, String instanceId, long epoch, boolean lost) {
        leaseHeld(objectName).set(0);
        handover(objectName, lost ? "lost" : "released");
    }

    private AtomicLong leaseHeld(String objectName) {
        return leasesHeld.computeIfAbsent(objectName, name -> registry.gauge("tidemark.lease.held",
                Tags.of("object", name), new AtomicLong()));
    }

    private void handover(String objectName, String event) {
        Counter.builder("tidemark.lease.handovers").tag("object", objectName).tag("event", event)
                .description("Leases taken, handed back or lost by this instance").register(registry).increment();
    }
}
