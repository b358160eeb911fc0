package io.tidemark.sync.micrometer;

import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.Gauge;
import io.micrometer.core.instrument.Meter;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.Tag;
import io.micrometer.core.instrument.Tags;
import io.micrometer.core.instrument.Timer;
import io.tidemark.sync.ChangeBatch;
import io.tidemark.sync.DestinationReport;
import io.tidemark.sync.Diagnostic;
import io.tidemark.sync.ObjectReport;
import io.tidemark.sync.Outcome;
import io.tidemark.sync.spi.DeadLetter;
import io.tidemark.sync.spi.SyncListener;

import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.time.format.DateTimeParseException;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.OptionalLong;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicReference;

/**
 * Publishes the engine's signals as Micrometer meters. Register it with
 * {@code SyncEngine.builder().listener(MicrometerSyncListener.create(registry))}; Micrometer is an optional
 * dependency of tidemark-core, needed only when this class is used. Every meter is listed, with its type, tags and
 * meaning, in docs/operations.md ("Metrics").
 *
 * <p>Per object (tag {@code object}): {@code tidemark.cycles} (tag {@code outcome}), {@code tidemark.cycle.duration},
 * {@code tidemark.cycle.failures} (tag {@code code}), {@code tidemark.changes}, {@code tidemark.pages},
 * {@code tidemark.watermark}, {@code tidemark.lag.versions}, {@code tidemark.lag.seconds}, {@code tidemark.blocked},
 * {@code tidemark.horizon.age}, {@code tidemark.diagnostics} (tag {@code code}). Per object and destination (tags
 * {@code object}, {@code destination}): {@code tidemark.delivery.duration} (tag {@code result}),
 * {@code tidemark.delivery.failures}, {@code tidemark.destination.position}, {@code tidemark.destination.blocked},
 * {@code tidemark.dead.letters}, {@code tidemark.dead.letter.failures}. With coordination, per object:
 * {@code tidemark.lease.held} (1 while this instance holds the object's lease, else 0) and
 * {@code tidemark.lease.handovers} (tag {@code event}: {@code acquired}, {@code released}, {@code lost}).
 */
public final class MicrometerSyncListener implements SyncListener {

    /** The provider diagnostic whose {@code held_since} detail gives {@code tidemark.horizon.age} (PostgreSQL). */
    static final String HORIZON_HELD_BACK = "HORIZON_HELD_BACK";

    private final MeterRegistry registry;
    private final Clock clock;
    private final Map<String, AtomicLong> watermarks = new ConcurrentHashMap<>();
    private final Map<String, AtomicLong> versionLags = new ConcurrentHashMap<>();
    private final Map<String, AtomicReference<Instant>> lastMoves = new ConcurrentHashMap<>();
    private final Map<String, AtomicLong> blocked = new ConcurrentHashMap<>();
    private final Map<String, AtomicReference<Instant>> horizons = new ConcurrentHashMap<>();
    private final Map<Tags, AtomicLong> positions = new ConcurrentHashMap<>();
    private final Map<Tags, AtomicLong> destinationsBlocked = new ConcurrentHashMap<>();

    private MicrometerSyncListener(MeterRegistry registry, Clock clock) {
        this.registry = Objects.requireNonNull(registry, "registry");
        this.clock = Objects.requireNonNull(clock, "clock");
    }

    // "exports": Micrometer is an optional ("requires static") module, so it cannot be required transitively;
    // an application calling this method has Micrometer and requires it itself.
    @SuppressWarnings("exports")
    public static MicrometerSyncListener create(MeterRegistry registry) {
        return create(registry, Clock.systemUTC());
    }

    /** With the clock that ages {@code tidemark.lag.seconds} and {@code tidemark.horizon.age}: the engine's. */
    @SuppressWarnings("exports")
    public static MicrometerSyncListener create(MeterRegistry registry, Clock clock) {
        return new MicrometerSyncListener(registry, clock);
    }

    @Override
    public void onReport(ObjectReport report) {
        String name = report.objectName();
        Tags object = Tags.of("object", name);
        Counter.builder("tidemark.cycles").tags(object).tag("outcome", report.outcome().name())
                .description("Sync cycles by outcome").register(registry).increment();
        Timer.builder("tidemark.cycle.duration").tags(object).description("Duration of a sync cycle")
                .register(registry).record(report.duration());
        report.error().ifPresent(e -> Counter.builder("tidemark.cycle.failures").tags(object)
                .tag("code", e.code().name()).description("Failed or blocked cycles by error code")
                .register(registry).increment());
        if (report.outcome() == Outcome.DELIVERED) {
            Counter.builder("tidemark.changes").tags(object).description("Changes delivered to every destination")
                    .register(registry).increment(report.changeCount());
            Counter.builder("tidemark.pages").tags(object).description("Pages delivered")
                    .register(registry).increment(report.pageCount());
        }
        synchronized (lock(name)) { // else a lease lost meanwhile could remove the gauges before they are set again
            if (!leasedElsewhere(name)) { // else the last cycle of a lease lost: the holder's gauges speak for it
                gauges(report);
            }
        }
    }

    private void gauges(ObjectReport report) {
        String name = report.objectName();
        report.toVersion().ifPresent(version -> holder(watermarks, name, "tidemark.watermark",
                "The object's watermark after its last cycle").set(version));
        if (report.outcome() != Outcome.PAUSED) {
            holder(blocked, name, "tidemark.blocked", "1 while the object or a destination of it is blocked")
                    .set(report.outcome() == Outcome.BLOCKED || !report.blockedDestinations().isEmpty() ? 1 : 0);
            horizon(name).set(report.diagnostics().stream().filter(d -> d.code().equals(HORIZON_HELD_BACK))
                    .map(MicrometerSyncListener::heldSince).flatMap(Optional::stream).findFirst().orElse(null));
        }
        for (DestinationReport d : report.destinations()) {
            Tags tags = Tags.of("object", name, "destination", d.destination());
            d.toVersion().ifPresent(v -> tagged(positions, tags, "tidemark.destination.position",
                    "The version the destination has accepted everything up to").set(v));
            if (d.outcome() != Outcome.PAUSED) {
                tagged(destinationsBlocked, tags, "tidemark.destination.blocked",
                        "1 while the destination is blocked").set(d.outcome() == Outcome.BLOCKED ? 1 : 0);
            }
        }
    }

    @Override
    public void onPosition(String objectName, OptionalLong watermark, OptionalLong versionsBehind,
                           Optional<Instant> lastMovedAt) {
        synchronized (lock(objectName)) {
            if (!leasedElsewhere(objectName)) {
                lag(objectName, versionsBehind, lastMovedAt);
            }
        }
    }

    private void lag(String objectName, OptionalLong versionsBehind, Optional<Instant> lastMovedAt) {
        versionsBehind.ifPresent(lag -> holder(versionLags, objectName, "tidemark.lag.versions",
                "The provider's current version minus the object's watermark").set(lag));
        lastMovedAt.ifPresent(at -> lastMoves.computeIfAbsent(objectName, n -> {
            AtomicReference<Instant> holder = new AtomicReference<>();
            gauge(n, Gauge.builder("tidemark.lag.seconds", holder, h -> secondsSince(h.get())).tag("object", n)
                    .description("Seconds since the object's watermark last moved").baseUnit("seconds"));
            return holder;
        }).set(at));
    }

    @Override
    public void onDelivery(String objectName, String destination, ChangeBatch page, Duration took,
                           Exception failure) {
        Tags tags = Tags.of("object", objectName, "destination", destination);
        Timer.builder("tidemark.delivery.duration").tags(tags).tag("result", failure == null ? "accepted" : "refused")
                .description("How long a destination took to accept or refuse a page").register(registry)
                .record(took);
        if (failure != null) {
            Counter.builder("tidemark.delivery.failures").tags(tags).description("Pages a destination refused")
                    .register(registry).increment();
        }
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

    private AtomicLong holder(Map<String, AtomicLong> holders, String objectName, String meter, String description) {
        return holders.computeIfAbsent(objectName, n -> {
            AtomicLong holder = new AtomicLong();
            gauge(n, Gauge.builder(meter, holder, AtomicLong::doubleValue).tag("object", n)
                    .description(description));
            return holder;
        });
    }

    private AtomicLong tagged(Map<Tags, AtomicLong> holders, Tags tags, String meter, String description) {
        return holders.computeIfAbsent(tags, t -> {
            AtomicLong holder = new AtomicLong();
            gauge(objectTag(t), Gauge.builder(meter, holder, AtomicLong::doubleValue).tags(t)
                    .description(description));
            return holder;
        });
    }

    /** Registers a gauge of {@code objectName}, kept so that {@link #removeGauges} finds it. */
    private <T> void gauge(String objectName, Gauge.Builder<T> gauge) {
        objectGauges.computeIfAbsent(objectName, n -> new CopyOnWriteArrayList<>()).add(gauge.register(registry));
    }

    private AtomicReference<Instant> horizon(String objectName) {
        return horizons.computeIfAbsent(objectName, n -> {
            AtomicReference<Instant> holder = new AtomicReference<>();
            gauge(n, Gauge.builder("tidemark.horizon.age", holder, h -> secondsSince(h.get())).tag("object", n)
                    .description("Seconds an old transaction has held the object's changes back; 0 when none")
                    .baseUnit("seconds"));
            return holder;
        });
    }

    private double secondsSince(Instant at) {
        return at == null ? 0 : Math.max(0, Duration.between(at, clock.instant()).toMillis() / 1000.0);
    }

    private static Optional<Instant> heldSince(Diagnostic diagnostic) {
        String value = diagnostic.details().get("held_since");
        if (value == null) {
            return Optional.empty();
        }
        try {
            return Optional.of(Instant.parse(value));
        } catch (DateTimeParseException e) {
            return Optional.empty();
        }
    }

    // --- coordination (engines on several instances) ----------------------------------------------------

    private final Map<String, AtomicLong> leasesHeld = new ConcurrentHashMap<>();
    private final Map<String, Object> objectLocks = new ConcurrentHashMap<>();
    /** The gauges registered per object (those only the lease holder publishes), as registered. */
    private final Map<String, List<Meter>> objectGauges = new ConcurrentHashMap<>();

    @Override
    public void onLeaseAcquired(String objectName, String instanceId, long epoch) {
        synchronized (lock(objectName)) {
            leaseHeld(objectName).set(1);
        }
        handover(objectName, "acquired");
    }

    @Override
    public void onLeaseReleased(String objectName, String instanceId, long epoch, boolean lost) {
        synchronized (lock(objectName)) {
            leaseHeld(objectName).set(0);
            removeGauges(objectName);
        }
        handover(objectName, lost ? "lost" : "released");
    }

    /**
     * Orders, per object, a cycle's gauge updates against the lease thread's removal of the gauges: a report read
     * as "held" must not register gauges again after the lease was lost and its gauges removed.
     */
    private Object lock(String objectName) {
        return objectLocks.computeIfAbsent(objectName, n -> new Object());
    }

    /**
     * With coordination, an object's gauges are published only by the instance holding its lease: once the lease
     * went elsewhere they are removed (rather than left at their last values, with {@code tidemark.lag.seconds}
     * growing for ever), and registered again by the first cycle after the lease comes back. Counters and timers
     * stay: they count what this instance did.
     */
    private void removeGauges(String objectName) {
        List<Meter> gauges = objectGauges.remove(objectName);
        if (gauges != null) {
            gauges.forEach(registry::remove);
        }
        watermarks.remove(objectName);
        versionLags.remove(objectName);
        lastMoves.remove(objectName);
        blocked.remove(objectName);
        horizons.remove(objectName);
        positions.keySet().removeIf(tags -> objectName.equals(objectTag(tags)));
        destinationsBlocked.keySet().removeIf(tags -> objectName.equals(objectTag(tags)));
    }

    private static String objectTag(Tags tags) {
        return tags.stream().filter(t -> t.getKey().equals("object")).map(Tag::getValue)
                .findFirst().orElse(null);
    }

    /** True once this instance lost or handed back the object's lease (and until it takes it again). */
    private boolean leasedElsewhere(String objectName) {
        AtomicLong held = leasesHeld.get(objectName);
        return held != null && held.get() == 0;
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
