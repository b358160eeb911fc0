package io.tidemark.sync;

import io.tidemark.sync.internal.engine.DefaultSyncEngine;
import io.tidemark.sync.internal.engine.EngineConfig;
import io.tidemark.sync.internal.engine.NamedDestination;
import io.tidemark.sync.spi.ChangeProvider;
import io.tidemark.sync.spi.DeadLetterStore;
import io.tidemark.sync.spi.Destination;
import io.tidemark.sync.spi.SyncListener;
import io.tidemark.sync.spi.WatermarkStore;

import java.time.Clock;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;

/**
 * Polls change procedures, delivers what they return to destinations, and advances each object's watermark
 * only when every destination accepted every change.
 *
 * <pre>{@code
 * SyncEngine engine = SyncEngine.builder()
 *         .provider(PostgresProvider.create(dataSource))
 *         .watermarks(JdbcWatermarkStore.create(dataSource))
 *         .track(TrackedObject.of("Items", "public.get_item_changes").initialSync(InitialSync.INCREMENTAL))
 *         .destination("audit", batch -> handle(batch))
 *         .pollInterval(Duration.ofSeconds(5))
 *         .build();
 *
 * SyncReport report = engine.runOnce();   // one synchronous cycle over every object
 * engine.start();                         // background polling
 * engine.close();                         // stops every poller for good
 * }</pre>
 *
 * <p>Thread-safe. Within one engine, two cycles of the same object never overlap.
 */
public interface SyncEngine extends AutoCloseable {

    static Builder builder() {
        return new Builder();
    }

    /** Runs one cycle for every tracked object, in order, on the calling thread. */
    SyncReport runOnce();

    /** Runs one cycle for one object on the calling thread. */
    ObjectReport runOnce(String objectName);

    /**
     * Starts background polling: each object is polled at its interval, at once again while its calls come
     * back full ({@code maxRows}), and at once when the provider signals changes. An object whose cycle failed
     * or was blocked waits before its next attempt: its interval, doubled after each further failure, up to
     * 5 minutes (or the interval if longer); change notifications do not shorten that wait, {@link #wake} and a
     * successful {@link #runOnce(String)} do.
     * Can be called once.
     */
    void start();

    /**
     * Asks for an immediate poll of the object (background mode), retrying a failing object at once; harmless if
     * it is already polling.
     */
    void wake(String objectName);

    /** Pauses the object: it is skipped until resumed. Persisted in the watermark store. */
    void pause(String objectName);

    /** Resumes a paused object and polls it soon. */
    void resume(String objectName);

    /**
     * Pauses one destination of the object: nothing is delivered to it until resumed, while the other destinations
     * carry on. Its position stays, and keeps the object's watermark (and with it the outbox's trimming) from
     * passing it, so it catches up from there when resumed. Persisted in the watermark store.
     *
     * @throws TidemarkException {@code UNKNOWN_OBJECT} or {@code UNKNOWN_DESTINATION} for a name the engine does
     *         not know
     */
    void pause(String objectName, String destination);

    /** Resumes a paused destination of the object and polls the object soon. */
    void resume(String objectName, String destination);

    /**
     * Forgets the object's watermark (and the procedure that produced it) so that its next cycle is a first
     * cycle again, following its {@link InitialSync}. The way out of
     * {@link ErrorCode#WATERMARK_SOURCE_CHANGED} when the new procedure's versions do not continue the old ones.
     */
    void reset(String objectName);

    /**
     * Lets the object continue from its stored watermark although that was produced by another procedure than
     * the one it calls now (after a rename, or when it was pointed at another function or table): the current
     * procedure is recorded as the watermark's source, the version is kept. Only correct when the new
     * procedure's versions continue the old ones (the same table's change tracking or outbox, for example);
     * otherwise {@link #reset(String)}. The way out of {@link ErrorCode#WATERMARK_SOURCE_CHANGED}; does nothing
     * when no watermark is stored.
     */
    void adoptWatermark(String objectName);

    ObjectStatus status(String objectName);

    /** The status of every tracked object, in the order they were tracked (see also {@link #snapshot()}). */
    List<ObjectStatus> status();

    List<TrackedObject> trackedObjects();

    /**
     * Everything at once, for a status endpoint: every object's and destination's status from one read of the
     * watermark store, the health verdict on them, and when it was taken. Immutable.
     */
    EngineStatus snapshot();

    // Live reconfiguration (see docs/architecture.md, "Live reconfiguration"). Each change is validated as build()
    // validates and fails with INVALID_CONFIGURATION naming the object or destination; a removal or change returns
    // once no cycle still uses what it replaced. Not from a listener or destination (ENGINE_STATE).

    /**
     * Starts tracking an object on a running (or not yet started) engine; a started engine polls it at once.
     * An object tracked before under this name continues from its stored watermark.
     *
     * @throws TidemarkException {@code INVALID_CONFIGURATION} for an invalid object or a name already tracked
     */
    void track(TrackedObject object);

    /**
     * Changes a tracked object (found by its name): procedure, intervals, {@code maxRows}, page size, initial sync.
     * Its running cycle, if any, ends first, with the former configuration; the next one uses the new. A new
     * procedure meets its watermark's source check ({@link ErrorCode#WATERMARK_SOURCE_CHANGED}) like a restart
     * with it would.
     *
     * @throws TidemarkException {@code UNKNOWN_OBJECT}, or {@code INVALID_CONFIGURATION} for an invalid object
     */
    void update(TrackedObject object);

    /**
     * Stops tracking the object: no cycle of it starts any more, and a running one ends before this returns. Its
     * watermark and destination positions stay in the store ({@link #reset(String)} it first to forget them), so
     * that tracking it again continues where it stopped.
     *
     * @throws TidemarkException {@code UNKNOWN_OBJECT}
     */
    void untrack(String objectName);

    /** {@link #addDestination(String, Destination, DeliveryPolicy, DestinationStart)}, blocking, current position. */
    default void addDestination(String name, Destination destination) {
        addDestination(name, destination, DeliveryPolicy.block(), DestinationStart.CURRENT_POSITION);
    }

    /**
     * Adds a destination to every object from their next cycle. On an object that delivers already it starts as
     * {@code start} says; a destination of this name removed before continues from its stored position if no
     * destination moved past it meanwhile, and otherwise also starts as {@code start} says.
     *
     * @throws TidemarkException {@code INVALID_CONFIGURATION} for an invalid destination or a name in use
     */
    void addDestination(String name, Destination destination, DeliveryPolicy policy,
                        DestinationStart start);

    /**
     * Swaps the destination of this name for another (a new client, a new policy), keeping its positions: it
     * continues exactly where the former one stopped, with no page offered twice. Returns once no cycle still
     * delivers to the former one.
     *
     * @throws TidemarkException {@code UNKNOWN_DESTINATION}, or {@code INVALID_CONFIGURATION}
     */
    void replaceDestination(String name, Destination destination, DeliveryPolicy policy);

    /**
     * Stops delivering to the destination. Returns once no cycle still delivers to it; its positions stay in the
     * store, and the objects' watermarks no longer wait for it.
     *
     * @throws TidemarkException {@code UNKNOWN_DESTINATION}, or {@code INVALID_CONFIGURATION} for the last one
     */
    void removeDestination(String name);

    /**
     * The engine's health verdict from {@link #status()}: up, degraded with reasons, or down with reasons, by the
     * rules in the README's "Monitoring" section (thresholds: {@link Builder#healthPolicy}). Cheap enough for a
     * health endpoint polled every few seconds: one read of the watermark store.
     */
    EngineHealth health();

    /**
     * The start-up check: whether the provider's database and the stores can be reached, and whether every
     * tracked procedure exists with the contract's signature (as far as the provider can tell from its catalog).
     * Reports every problem, not only the first; calls no procedure and changes nothing.
     * {@link Builder#checkOnBuild(boolean)} runs it at {@code build()}.
     */
    CheckReport check();

    /**
     * The engine's dead letters: list, replay to the destination that refused them, purge. Fails with
     * {@link ErrorCode#INVALID_CONFIGURATION} on use when no dead-letter store is configured.
     */
    DeadLetters deadLetters();

    /**
     * Stops for good: no new cycle starts, running cycles get the shutdown timeout to finish, then are
     * cancelled (their watermark is not moved, so their changes are offered again by the next engine).
     * Every poller thread has ended when this returns. Idempotent.
     */
    @Override
    void close();

    /**
     * Builds a {@link SyncEngine}. Setters only store; {@link #build()} checks every rule (and every tracked
     * object) at once and reports all violations in one {@link ErrorCode#INVALID_CONFIGURATION} error.
     */
    final class Builder {
        private ChangeProvider provider;
        private WatermarkStore watermarks;
        private DeadLetterStore deadLetters;
        private final List<TrackedObject> objects = new ArrayList<>();
        private final List<NamedDestination> destinations = new ArrayList<>();
        private final List<SyncListener> listeners = new ArrayList<>();
        private Duration pollInterval = EngineConfig.DEFAULT_POLL_INTERVAL;
        private int pageSize = EngineConfig.DEFAULT_PAGE_SIZE;
        private Integer threads;
        private Duration shutdownTimeout = EngineConfig.DEFAULT_SHUTDOWN_TIMEOUT;
        private Clock clock = Clock.systemUTC();
        private String name = "tidemark";
        private boolean checkOnBuild;
        private HealthPolicy healthPolicy = HealthPolicy.defaults();
        private Coordination coordination;

        private Builder() {
        }

        public Builder provider(ChangeProvider provider) {
            this.provider = provider;
            return this;
        }

        public Builder watermarks(WatermarkStore store) {
            this.watermarks = store;
            return this;
        }

        /** Where pages go that a destination with a dead-letter policy refused. */
        public Builder deadLetters(DeadLetterStore store) {
            this.deadLetters = store;
            return this;
        }

        public Builder track(TrackedObject object) {
            this.objects.add(object);
            return this;
        }

        /** Adds a destination that blocks the object when it refuses a batch ({@link DeliveryPolicy#block()}). */
        public Builder destination(String name, Destination destination) {
            return destination(name, destination, DeliveryPolicy.block());
        }

        public Builder destination(String name, Destination destination, DeliveryPolicy policy) {
            return destination(name, destination, policy, DestinationStart.CURRENT_POSITION);
        }

        /**
         * Adds a destination with its policy and where it starts on objects that deliver already when it is added
         * ({@link DestinationStart}; on an object's first cycle every destination starts together).
         */
        public Builder destination(String name, Destination destination, DeliveryPolicy policy,
                                   DestinationStart start) {
            this.destinations.add(new NamedDestination(name, destination, policy, start));
            return this;
        }

        public Builder listener(SyncListener listener) {
            this.listeners.add(listener);
            return this;
        }

        /** Default interval between background polls of an object; 30 seconds unless set. */
        public Builder pollInterval(Duration interval) {
            this.pollInterval = interval;
            return this;
        }

        /** Default largest number of changes per {@link ChangeBatch}; 1000 unless set. */
        public Builder pageSize(int pageSize) {
            this.pageSize = pageSize;
            return this;
        }

        /** Number of poller threads; default the number of objects, at most 4. */
        public Builder threads(int threads) {
            this.threads = threads;
            return this;
        }

        /** How long {@link SyncEngine#close()} lets running cycles finish before cancelling them; 30 s unless set. */
        public Builder shutdownTimeout(Duration timeout) {
            this.shutdownTimeout = timeout;
            return this;
        }

        /** The clock for stored timestamps; the system UTC clock unless set. */
        public Builder clock(Clock clock) {
            this.clock = clock;
            return this;
        }

        /** A name for the engine's threads and logs; default {@code tidemark}. */
        public Builder name(String name) {
            this.name = name;
            return this;
        }

        /**
         * Whether {@link #build()} runs the engine's {@link SyncEngine#check() start-up check} and fails with one
         * {@link ErrorCode#CHECK_FAILED} error listing every problem (an unreachable database or store, a missing
         * procedure, a wrong signature); default false.
         */
        public Builder checkOnBuild(boolean enabled) {
            this.checkOnBuild = enabled;
            return this;
        }

        /** The thresholds of {@link SyncEngine#health()}; {@link HealthPolicy#defaults()} unless set (null too). */
        public Builder healthPolicy(HealthPolicy policy) {
            this.healthPolicy = policy;
            return this;
        }

        /**
         * Runs this engine as one of several instances sharing the objects (see {@link Coordination}); without it,
         * the engine processes every object itself. Needs a {@link JdbcWatermarkStore} (and, if any, a
         * {@link JdbcDeadLetterStore} in the same schema).
         */
        public Builder coordination(Coordination coordination) {
            this.coordination = coordination;
            return this;
        }

        /**
         * Validates the configuration and each object's procedure name, and builds the engine. Runs no SQL unless
         * {@link #checkOnBuild(boolean)} asks for the start-up check.
         */
        public SyncEngine build() {
            EngineConfig config = new EngineConfig(name, provider, watermarks, deadLetters, objects, destinations,
                    listeners, pollInterval, pageSize, threads, shutdownTimeout, clock, coordination);
            SyncEngine engine = new DefaultSyncEngine(config, healthPolicy);
            if (checkOnBuild) {
                engine.check().throwIfProblems(name);
            }
            return engine;
        }
    }
}
