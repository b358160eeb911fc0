package io.tidemark.sync.internal.engine;

import io.tidemark.sync.Coordination;
import io.tidemark.sync.DeliveryPolicy;
import io.tidemark.sync.TrackedObject;
import io.tidemark.sync.internal.config.Checks;
import io.tidemark.sync.internal.config.Defaults;
import io.tidemark.sync.internal.deadletter.ObservedDeadLetterStore;
import io.tidemark.sync.internal.store.JdbcStore;
import io.tidemark.sync.spi.ChangeProvider;
import io.tidemark.sync.spi.DeadLetterStore;
import io.tidemark.sync.spi.SyncListener;
import io.tidemark.sync.spi.WatermarkStore;

import java.time.Clock;
import java.time.Duration;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ConcurrentMap;

/** The engine's validated, immutable configuration. */
public final class EngineConfig {

    public static final Duration DEFAULT_POLL_INTERVAL = Defaults.POLL_INTERVAL;
    public static final int DEFAULT_PAGE_SIZE = Defaults.PAGE_SIZE;
    public static final Duration DEFAULT_SHUTDOWN_TIMEOUT = Defaults.SHUTDOWN_TIMEOUT;

    private final String name;
    private final ChangeProvider provider;
    private final WatermarkStore watermarks;
    private final DeadLetterStore deadLetters;
    private final List<TrackedObject> objects;
    /** Replaced as a whole by live reconfiguration; a cycle reads it once, when it plans its positions. */
    private volatile List<NamedDestination> destinations;
    private final List<SyncListener> listeners;
    private final Duration pollInterval;
    private final int pageSize;
    private final int threads;
    private final Duration shutdownTimeout;
    private final Clock clock;
    /** Null without coordination: the engine then runs every object, as a single instance. */
    private final Coordination coordination;
    /**
     * Each object's source identity, resolved once: a cycle compares it with the stored one every time. Keyed by
     * the object's whole configuration, so that an object changed on a running engine is never judged by the
     * identity of its former procedure.
     */
    private final ConcurrentMap<TrackedObject, String> sources = new ConcurrentHashMap<>();

    /**
     * Validates every rule at once (the builder's setters only store) and fails with one
     * {@code INVALID_CONFIGURATION} error listing every violation, including each object's procedure name as
     * the provider judges it.
     */
    public EngineConfig(String name, ChangeProvider provider, WatermarkStore watermarks, DeadLetterStore deadLetters,
                        List<TrackedObject> objects, List<NamedDestination> destinations, List<SyncListener> listeners,
                        Duration pollInterval, int pageSize, Integer threads, Duration shutdownTimeout, Clock clock) {
        this(name, provider, watermarks, deadLetters, objects, destinations, listeners, pollInterval, pageSize, threads,
                shutdownTimeout, clock, null);
    }

    /** As above, with coordination (null for none). */
    public EngineConfig(String name, ChangeProvider provider, WatermarkStore watermarks, DeadLetterStore deadLetters,
                        List<TrackedObject> objects, List<NamedDestination> destinations, List<SyncListener> listeners,
                        Duration pollInterval, int pageSize, Integer threads, Duration shutdownTimeout, Clock clock,
                        Coordination coordination) {
        Checks checks = Checks.of("SyncEngine");
        checks.notBlank("name", name);
        checks.that(provider != null, "The engine needs a provider (for example PostgresProvider.create(dataSource))");
        checks.that(watermarks != null, "The engine needs a watermark store (JdbcWatermarkStore.create(dataSource)"
                + " or InMemoryWatermarkStore.create())");
        checks.positive("pollInterval", pollInterval);
        checks.atLeast("pageSize", pageSize, 1);
        checks.notNegative("shutdownTimeout", shutdownTimeout);
        checks.notNull("clock", clock);
        int wanted = threads == null ? Math.min(objects.size(), Defaults.MAX_THREADS) : threads;
        checks.that(threads == null || wanted >= 1, "threads must be at least 1, got " + wanted);

        checks.that(!objects.isEmpty(), "Track at least one object: builder.track(TrackedObject.of(name, procedure))");
        checks.that(!destinations.isEmpty(), "Add at least one destination: builder.destination(name, batch -> ...)");
        checks.that(objects.stream().allMatch(o -> o != null), "track(...) was given null");
        checks.that(listeners.stream().allMatch(l -> l != null), "listener(...) was given null");
        for (TrackedObject object : objects) {
            // Refuse unsafe procedure names now, before the first cycle could run any SQL.
            if (object != null && TrackedObjectRules.check(checks, object) && provider != null) {
                checks.valid(() -> provider.validate(object));
            }
        }
        destinations.forEach(d -> d.check(checks));
        unique(checks, objects.stream().filter(o -> o != null && o.name() != null).map(TrackedObject::name).toList(),
                "tracked object");
        unique(checks, destinations.stream().map(NamedDestination::name).filter(n -> n != null).toList(),
                "destination");
        boolean needsDeadLetters = destinations.stream().anyMatch(d -> d.policy() != null
                && d.policy().whenExhausted() == DeliveryPolicy.WhenExhausted.DEAD_LETTER);
        checks.that(!needsDeadLetters || deadLetters != null, "A destination dead-letters refused pages, but no"
                + " dead-letter store is configured: add builder.deadLetters(JdbcDeadLetterStore.create(dataSource))"
                + " or InMemoryDeadLetterStore.create()");
        if (coordination != null) {
            checkCoordinated(checks, watermarks, deadLetters);
        }
        checks.throwIfAny();

        this.name = name;
        this.provider = provider;
        this.watermarks = watermarks;
        this.deadLetters = ObservedDeadLetterStore.of(deadLetters, listeners);
        this.objects = List.copyOf(objects);
        this.destinations = List.copyOf(destinations);
        this.listeners = List.copyOf(listeners);
        this.pollInterval = pollInterval;
        this.pageSize = pageSize;
        this.shutdownTimeout = shutdownTimeout;
        this.clock = clock;
        this.threads = wanted;
        this.coordination = coordination;
    }

    /**
     * Coordination fences every write in the write's own transaction, against the lease table next to the
     * watermarks: only the JDBC stores can do that, and the dead letters must sit in the same schema.
     */
    private static void checkCoordinated(Checks checks, WatermarkStore watermarks, DeadLetterStore deadLetters) {
        if (watermarks == null) {
            return;
        }
        boolean jdbc = watermarks instanceof JdbcStore;
        checks.that(jdbc, "coordination needs a JdbcWatermarkStore: each write of a lease holder is fenced in the same"
                + " transaction against the lease table next to the watermarks, which "
                + watermarks.getClass().getSimpleName() + " cannot do");
        if (!jdbc || deadLetters == null) {
            return;
        }
        String leases = ((JdbcStore) watermarks).support().dialect().leases().leaseTable();
        boolean sameSchema = deadLetters instanceof JdbcStore d
                && d.support().dialect().leases().leaseTable().equals(leases);
        checks.that(sameSchema, "coordination needs the dead-letter store to be a JdbcDeadLetterStore in the same"
                + " database and schema as the watermark store (lease table " + leases + "): its writes are fenced"
                + " against that table");
        if (sameSchema) {
            // The same names in another database would fence against another lease table: compare the databases.
            String ours = ((JdbcStore) watermarks).support().databaseIdentity();
            String theirs = ((JdbcStore) deadLetters).support().databaseIdentity();
            checks.that(ours.equals(theirs), "coordination needs the dead-letter store in the same database as the"
                    + " watermark store, whose lease table " + leases + " fences its writes; the watermark store"
                    + " reaches database " + ours + ", the dead-letter store " + theirs);
        }
    }

    /** The coordination of several instances, if configured. */
    public java.util.Optional<Coordination> coordination() {
        return java.util.Optional.ofNullable(coordination);
    }

    private static void unique(Checks checks, List<String> names, String what) {
        Set<String> seen = new HashSet<>();
        for (String n : names) {
            checks.that(seen.add(n), "Two " + what + "s are named '" + n + "'; names must be unique");
        }
    }

    public String name() {
        return name;
    }

    public ChangeProvider provider() {
        return provider;
    }

    public WatermarkStore watermarks() {
        return watermarks;
    }

    public DeadLetterStore deadLetters() {
        return deadLetters;
    }

    public List<TrackedObject> objects() {
        return objects;
    }

    /** The provider's {@link ChangeProvider#sourceIdentity} of {@code object}, asked once per object. */
    public String sourceIdentity(TrackedObject object) {
        return sources.computeIfAbsent(object, o -> provider.sourceIdentity(o));
    }

    /** Drops the identity of an object no longer tracked in this configuration (live reconfiguration). */
    void forgetSource(TrackedObject object) {
        sources.remove(object);
    }

    /** Live reconfiguration: the validated destinations that cycles starting from now deliver to. */
    void destinations(List<NamedDestination> destinations) {
        this.destinations = List.copyOf(destinations);
    }

    public List<NamedDestination> destinations() {
        return destinations;
    }

    public List<SyncListener> listeners() {
        return listeners;
    }

    public Duration pollInterval(TrackedObject object) {
        return object.pollInterval().orElse(pollInterval);
    }

    public int pageSize(TrackedObject object) {
        return object.pageSize().orElse(pageSize);
    }

    public int threads() {
        return threads;
    }

    public Duration shutdownTimeout() {
        return shutdownTimeout;
    }

    public Clock clock() {
        return clock;
    }
}
