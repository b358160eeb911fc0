package io.tidemark.sync.internal.engine;

import io.tidemark.sync.CheckReport;
import io.tidemark.sync.DeadLetters;
import io.tidemark.sync.DeliveryPolicy;
import io.tidemark.sync.DestinationStart;
import io.tidemark.sync.EngineHealth;
import io.tidemark.sync.EngineStatus;
import io.tidemark.sync.ErrorCode;
import io.tidemark.sync.HealthPolicy;
import io.tidemark.sync.ObjectReport;
import io.tidemark.sync.ObjectStatus;
import io.tidemark.sync.Outcome;
import io.tidemark.sync.SyncEngine;
import io.tidemark.sync.SyncReport;
import io.tidemark.sync.TidemarkException;
import io.tidemark.sync.TrackedObject;
import io.tidemark.sync.internal.coordination.LeaseCoordinator;
import io.tidemark.sync.internal.deadletter.DeadLetterReplay;
import io.tidemark.sync.internal.store.JdbcLeaseStore;
import io.tidemark.sync.internal.store.JdbcStore;
import io.tidemark.sync.spi.ChangeProvider;
import io.tidemark.sync.spi.Destination;
import io.tidemark.sync.spi.WatermarkState;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Optional;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ScheduledThreadPoolExecutor;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;
import java.util.concurrent.locks.ReentrantLock;
import java.util.function.Supplier;

/** The {@link SyncEngine} behind {@link SyncEngine#builder()}. */
public final class DefaultSyncEngine implements SyncEngine {

    private static final Logger LOG = LoggerFactory.getLogger(SyncEngine.class);
    /** After cancelling calls at the end of the shutdown timeout, how long to wait for threads to end. */
    private static final Duration CANCEL_GRACE = Duration.ofSeconds(10);
    /**
     * How often the database is probed while an object is failing because it could not be reached; a short interval
     * so that objects resume well within a second of the database's return. Nothing is probed otherwise.
     */
    static final Duration PROBE_INTERVAL = Duration.ofMillis(250);
    /** How long one probe's {@code SELECT 1} may run. */
    static final Duration PROBE_TIMEOUT = Duration.ofSeconds(5);

    private enum State { NEW, STARTED, CLOSED }

    private final EngineConfig config;
    // Copy-on-write: replaced as a whole (under "this") when objects are tracked, changed or untracked live.
    private volatile Map<String, TrackedObject> objects = new LinkedHashMap<>();
    // One lock per object name, never removed: a re-added or changed object's cycles queue behind its former ones.
    private final Map<String, ReentrantLock> locks = new ConcurrentHashMap<>();
    private final Map<String, ObjectReport> lastReports = new ConcurrentHashMap<>();
    private final Map<String, FailureLog> failureLogs = new ConcurrentHashMap<>();
    private final ObjectActivity activity;
    private final HealthPolicy healthPolicy;
    private final EngineCallContext calls = new EngineCallContext();
    private final CycleRunner runner;
    private final AtomicReference<State> state = new AtomicReference<>(State.NEW);
    private final Map<String, Poller> pollers = new LinkedHashMap<>();
    private ScheduledThreadPoolExecutor scheduler;
    private PollerThreadFactory threads;
    private ScheduledThreadPoolExecutor prober;
    private PollerThreadFactory proberThreads;
    private AutoCloseable subscription;
    /** Null without coordination. */
    private final LeaseCoordinator coordinator;

    public DefaultSyncEngine(EngineConfig config) {
        this(config, HealthPolicy.defaults());
    }

    public DefaultSyncEngine(EngineConfig config, HealthPolicy healthPolicy) {
        this.config = config;
        this.healthPolicy = healthPolicy == null ? HealthPolicy.defaults() : healthPolicy;
        this.activity = new ObjectActivity(config.clock());
        for (TrackedObject object : config.objects()) {
            objects.put(object.name(), object);
            // Fair: a reconfiguration waiting for the running cycle (awaitCycles) must not be overtaken by the
            // next cycles of an object that polls back to back.
            locks.put(object.name(), new ReentrantLock(true));
            failureLogs.put(object.name(), new FailureLog(object.name(), config.clock()));
        }
        this.coordinator = config.coordination().map(c -> new LeaseCoordinator(config.name(), c,
                new JdbcLeaseStore(((JdbcStore) config.watermarks()).support()), this::objectNames,
                () -> config.destinations().stream().map(NamedDestination::name).toList(), locks::get,
                this::wakeIfTracked, this::forgetLeased, config.listeners())).orElse(null);
        LeaseCoordinator leases = coordinator;
        this.runner = new CycleRunner(config, calls, leases == null ? Set::of : leases::liveDestinations);
    }

    /** A lease just taken: poll at once. The object may have been untracked since the round read the names. */
    private void wakeIfTracked(String objectName) {
        poller(objectName).ifPresent(Poller::wake);
    }

    /** A lease given back or lost: what this instance remembers of the object's cycles is no longer its to judge. */
    private void forgetLeased(String objectName) {
        runner.forget(objectName);
        lastReports.remove(objectName);
        activity.forget(objectName);
    }

    private synchronized List<String> objectNames() {
        return List.copyOf(objects.keySet());
    }

    @Override
    public SyncReport runOnce() {
        checkOpen();
        Instant startedAt = config.clock().instant();
        long started = System.nanoTime();
        List<ObjectReport> reports = new ArrayList<>(objects.size());
        for (TrackedObject object : objects.values()) {
            ObjectReport report = runManually(object);
            if (report != null) { // null: untracked or changed while this loop ran
                reports.add(report);
            }
        }
        return new SyncReport(startedAt, Duration.ofNanos(System.nanoTime() - started), reports);
    }

    @Override
    public ObjectReport runOnce(String objectName) {
        checkOpen();
        ObjectReport report = runManually(object(objectName));
        if (report == null) {
            throw new TidemarkException(ErrorCode.UNKNOWN_OBJECT, "The object '" + objectName + "' of the engine '"
                    + config.name() + "' was untracked or changed while its cycle waited to run");
        }
        return report;
    }

    /** A cycle the application asked for; a success also ends the background poller's retry wait, if any. */
    private ObjectReport runManually(TrackedObject object) {
        ObjectReport report = runCycle(object);
        if (report == null) {
            return null;
        }
        FailureLog log = failureLogs.get(object.name());
        if (report.isSuccess()) {
            log.succeeded(report);
            poller(object.name()).ifPresent(Poller::succeededElsewhere);
        } else {
            log.failed(report, null);
        }
        return report;
    }

    /** A cycle of the background poller: without coordination it may start from the state it knows it stored. */
    private ObjectReport runPolled(TrackedObject object) {
        return runCycle(object, true);
    }

    private ObjectReport runCycle(TrackedObject object) {
        return runCycle(object, false);
    }

    /** Null when the object was untracked or changed before its cycle got the lock: that cycle must not run. */
    private ObjectReport runCycle(TrackedObject object, boolean polled) {
        ReentrantLock lock = locks.get(object.name());
        lock.lock();
        try (LogContext logContext = LogContext.cycle(config.name(), object.name())) {
            if (objects.get(object.name()) != object) {
                return null;
            }
            if (coordinator != null) {
                // Only under this instance's lease; an object another instance holds leaves no report here.
                ObjectReport report = coordinator.runHolding(object.name(), () -> runner.run(object));
                if (report.outcome() != Outcome.LEASED_ELSEWHERE && coordinator.held(object.name()).isPresent()) {
                    lastReports.put(object.name(), report);
                    activity.record(report);
                } else {
                    lastReports.remove(object.name()); // the holder's report counts, not this instance's last one
                }
                return report;
            }
            ObjectReport report = runner.run(object, polled);
            lastReports.put(object.name(), report);
            activity.record(report);
            return report;
        } finally {
            lock.unlock();
        }
    }

    @Override
    public synchronized void start() {
        if (!state.compareAndSet(State.NEW, State.STARTED)) {
            throw new TidemarkException(ErrorCode.ENGINE_STATE, "The engine '" + config.name() + "' is "
                    + (state.get() == State.CLOSED ? "closed" : "already started")
                    + "; start() can be called once. Build a new engine to start again.");
        }
        threads = new PollerThreadFactory(config.name());
        scheduler = new ScheduledThreadPoolExecutor(config.threads(), threads);
        scheduler.setRemoveOnCancelPolicy(true);
        scheduler.setExecuteExistingDelayedTasksAfterShutdownPolicy(false);
        for (TrackedObject object : objects.values()) {
            Poller poller = new Poller(object, config.pollInterval(object), scheduler, this::runPolled,
                    failureLogs.get(object.name()));
            pollers.put(object.name(), poller);
        }
        pollers.values().forEach(Poller::start);
        if (coordinator != null) {
            coordinator.start();
        }
        // Its own thread: a probe may wait on a connection attempt, which must not hold up any object's cycle.
        proberThreads = new PollerThreadFactory(config.name(), "probe");
        prober = new ScheduledThreadPoolExecutor(1, proberThreads);
        prober.setExecuteExistingDelayedTasksAfterShutdownPolicy(false);
        prober.scheduleWithFixedDelay(this::probeIfWaiting, PROBE_INTERVAL.toNanos(), PROBE_INTERVAL.toNanos(),
                TimeUnit.NANOSECONDS);
        try {
            subscription = config.provider().subscribe(objects.values(), this::changesNotified);
        } catch (RuntimeException e) {
            LOG.warn("Change notifications could not be started; polling at the interval only: {}", e.toString());
        }
        LOG.info("Engine '{}' started: {} objects, {} poller threads", config.name(), objects.size(), config.threads());
    }

    @Override
    public void wake(String objectName) {
        object(objectName);
        poller(objectName).ifPresent(Poller::wake);
    }

    /**
     * While some object is failing because the database could not be reached, asks the provider whether it answers
     * and, when it does, retries those objects at once. Costs nothing while no object waits for the database.
     */
    private void probeIfWaiting() {
        List<Poller> waiting;
        synchronized (this) {
            waiting = pollers.values().stream().filter(Poller::waitingForDatabase).toList();
        }
        if (waiting.isEmpty()) {
            return;
        }
        ChangeProvider.Reachability reachability;
        try {
            reachability = config.provider().probe(PROBE_TIMEOUT);
        } catch (RuntimeException e) {
            LOG.debug("The provider's reachability probe failed: {}", e.toString());
            return;
        }
        if (reachability == ChangeProvider.Reachability.REACHABLE) {
            waiting.forEach(Poller::databaseReachable);
        } else if (reachability == ChangeProvider.Reachability.UNREACHABLE) {
            waiting.forEach(Poller::databaseUnreachable);
        }
    }

    /** The provider's change notifications: they do not hurry a failing object's next attempt. */
    private void changesNotified(String objectName) {
        poller(objectName).ifPresent(Poller::changesNotified);
    }

    /** The object's background poller, once the engine is started. */
    private synchronized Optional<Poller> poller(String objectName) {
        return Optional.ofNullable(pollers.get(objectName));
    }

    @Override
    public void pause(String objectName) {
        object(objectName);
        config.watermarks().setPaused(objectName, true, config.clock().instant());
        runner.forget(objectName);
        LOG.info("[{}] paused", objectName);
    }

    @Override
    public void resume(String objectName) {
        object(objectName);
        config.watermarks().setPaused(objectName, false, config.clock().instant());
        runner.forget(objectName);
        LOG.info("[{}] resumed", objectName);
        wake(objectName);
    }

    @Override
    public void pause(String objectName, String destination) {
        object(objectName);
        destination(destination);
        config.watermarks().setDestinationPaused(objectName, destination, true, config.clock().instant());
        runner.forget(objectName);
        LOG.info("[{}] destination '{}' paused", objectName, destination);
    }

    @Override
    public void resume(String objectName, String destination) {
        object(objectName);
        destination(destination);
        config.watermarks().setDestinationPaused(objectName, destination, false, config.clock().instant());
        runner.forget(objectName);
        LOG.info("[{}] destination '{}' resumed", objectName, destination);
        wake(objectName);
    }

    @Override
    public void reset(String objectName) {
        object(objectName);
        ReentrantLock lock = locks.get(objectName);
        lock.lock();
        try {
            config.watermarks().reset(objectName, config.clock().instant());
            runner.forget(objectName);
        } finally {
            lock.unlock();
        }
        LOG.warn("[{}] watermark reset; the next cycle is a first cycle ({})", objectName,
                objects.get(objectName).initialSync());
    }

    @Override
    public void adoptWatermark(String objectName) {
        TrackedObject object = object(objectName);
        String source = config.sourceIdentity(object);
        ReentrantLock lock = locks.get(objectName);
        lock.lock();
        try {
            config.watermarks().adoptSource(objectName, source, config.clock().instant());
            runner.forget(objectName);
        } finally {
            lock.unlock();
        }
        LOG.warn("[{}] stored watermark adopted for {}; the next cycle continues from it", objectName, source);
    }

    @Override
    public ObjectStatus status(String objectName) {
        TrackedObject object = object(objectName);
        WatermarkState stored = withLastPoll(config.watermarks().load(objectName)
                .orElseGet(() -> new WatermarkState(objectName, null, false, null, null, null)));
        return objectStatus(object, stored, leaseHolders().get(objectName));
    }

    @Override
    public List<ObjectStatus> status() {
        Map<String, WatermarkState> all = config.watermarks().loadAll();
        List<ObjectStatus> statuses = new ArrayList<>(objects.size());
        Map<String, String> holders = leaseHolders();
        for (TrackedObject object : objects.values()) {
            WatermarkState stored = withLastPoll(all.getOrDefault(object.name(),
                    new WatermarkState(object.name(), null, false, null, null, null)));
            statuses.add(objectStatus(object, stored, holders.get(object.name())));
        }
        return statuses;
    }

    private ObjectStatus objectStatus(TrackedObject object, WatermarkState stored, String leaseHolder) {
        ObjectReport last = lastReports.get(object.name());
        return new ObjectStatus(object, stored, last, last == null ? List.of() : last.diagnostics(),
                activity.of(object.name()), config.destinations().stream().map(NamedDestination::name).toList(),
                leaseHolder);
    }

    /** With coordination, who holds each object's lease as the database has it; empty without. */
    private Map<String, String> leaseHolders() {
        return coordinator == null ? Map.of() : coordinator.holders();
    }

    @Override
    public EngineHealth health() {
        boolean closed = state.get() == State.CLOSED;
        return judge(closed, closed ? List.of() : status(), config.clock().instant());
    }

    @Override
    public EngineStatus snapshot() {
        boolean closed = state.get() == State.CLOSED;
        List<ObjectStatus> statuses = status();
        Instant now = config.clock().instant();
        return new EngineStatus(config.name(), now, statuses, judge(closed, statuses, now));
    }

    private EngineHealth judge(boolean closed, List<ObjectStatus> statuses, Instant now) {
        Instant since = now.minus(healthPolicy.deadLetterWindow());
        return HealthRules.judge(closed, config.name(), statuses, healthPolicy, now,
                name -> activity.deadLetteredSince(name, since));
    }

    /**
     * The stored state with this engine's own last poll of the object, which is kept in memory (the store is
     * written only when the version moves or the error changes), when it is the later one.
     */
    private WatermarkState withLastPoll(WatermarkState stored) {
        Optional<Instant> polled = runner.lastPolled(stored.objectName());
        if (polled.isEmpty() || stored.lastPolledAt().map(p -> !p.isBefore(polled.get())).orElse(false)) {
            return stored;
        }
        return new WatermarkState(stored.objectName(), stored.version().isPresent() ? stored.version().getAsLong()
                : null, stored.paused(), stored.lastMovedAt().orElse(null), polled.get(),
                stored.lastError().orElse(null), stored.source().orElse(null), stored.positions());
    }

    @Override
    public CheckReport check() {
        List<CheckReport.Problem> problems = new ArrayList<>();
        collect(problems, "provider " + config.provider().name(),
                () -> config.provider().check(List.copyOf(objects.values())));
        collect(problems, "watermark store", () -> config.watermarks().check());
        if (config.deadLetters() != null) {
            collect(problems, "dead-letter store", () -> config.deadLetters().check());
        }
        if (coordinator != null) {
            collect(problems, "coordination", coordinator::check);
        }
        return new CheckReport(problems);
    }

    /** One component's problems; a check that throws is itself one problem of that component. */
    private static void collect(List<CheckReport.Problem> problems, String component,
                                Supplier<List<CheckReport.Problem>> check) {
        try {
            problems.addAll(check.get());
        } catch (TidemarkException e) {
            problems.add(new CheckReport.Problem(component, e.code(), e.getMessage()));
        } catch (RuntimeException e) {
            problems.add(new CheckReport.Problem(component, ErrorCode.INTERNAL, "the check failed: " + e));
        }
    }

    /** Built on each call: it holds no state of its own (claims live in the store). */
    @Override
    public DeadLetters deadLetters() {
        Map<String, Destination> byName = new LinkedHashMap<>();
        config.destinations().forEach(d -> byName.put(d.name(), d.destination()));
        return new DeadLetterReplay(config.name(), config.deadLetters(), byName, config.clock());
    }

    @Override
    public List<TrackedObject> trackedObjects() {
        return List.copyOf(objects.values());
    }

    // Live reconfiguration. Each change is validated as build() validates, then swaps the configuration as a
    // whole; a cycle reads it once, when it starts. Removing or changing something waits for the cycles that may
    // still use the former configuration (see awaitCycles), so that on return nothing calls it any more.

    @Override
    public void track(TrackedObject object) {
        checkOpen();
        synchronized (this) {
            ReconfigurationRules.checkObject(config, objects, object, false);
            install(object);
        }
        runner.forgetAll();
        resubscribe();
        LOG.info("[{}] tracked live: {}", object.name(), object);
    }

    @Override
    public void update(TrackedObject object) {
        checkOpen();
        refuseWithinCycle();
        TrackedObject former;
        synchronized (this) {
            ReconfigurationRules.checkObject(config, objects, object, true);
            former = objects.get(object.name());
            stopPoller(object.name());
            install(object);
        }
        awaitCycles(List.of(object.name()));
        if (!former.equals(object)) {
            config.forgetSource(former);
        }
        runner.forgetAll();
        resubscribe();
        LOG.info("[{}] changed live: {} (was {})", object.name(), object, former);
    }

    @Override
    public void untrack(String objectName) {
        checkOpen();
        refuseWithinCycle();
        TrackedObject former;
        synchronized (this) {
            former = object(objectName);
            Map<String, TrackedObject> next = new LinkedHashMap<>(objects);
            next.remove(objectName);
            objects = next;
            stopPoller(objectName);
        }
        awaitCycles(List.of(objectName));
        config.forgetSource(former);
        activity.forget(objectName);
        lastReports.remove(objectName); // tracked again, it starts as NOT_RUN
        runner.forgetAll();
        resubscribe();
        synchronized (this) {
            // A track() of the name while this waited for the cycles has validated it again: the provider's
            // registration is the new object's then, and must stay. Checked under the lock track() validates under.
            if (!objects.containsKey(objectName)) {
                try {
                    config.provider().untracked(former);
                } catch (RuntimeException e) {
                    // The object is untracked either way; what the provider failed to let go of, it holds until it
                    // closes.
                    LOG.warn("[{}] the provider {} failed to forget the untracked object: {}", objectName,
                            config.provider().name(), e.toString());
                }
            }
        }
        LOG.info("[{}] untracked live; its watermark and positions stay in the store", objectName);
    }

    @Override
    public void addDestination(String name, Destination destination, DeliveryPolicy policy, DestinationStart start) {
        checkOpen();
        NamedDestination added = new NamedDestination(name, destination, policy, start);
        synchronized (this) {
            ReconfigurationRules.checkDestination(config, added, false);
            List<NamedDestination> next = new ArrayList<>(config.destinations());
            next.add(added);
            config.destinations(next);
        }
        runner.forgetAll();
        LOG.info("Engine '{}': destination '{}' added live ({}, {})", config.name(), name, policy, start);
        objects.keySet().forEach(n -> poller(n).ifPresent(Poller::wake));
    }

    @Override
    public void replaceDestination(String name, Destination destination, DeliveryPolicy policy) {
        checkOpen();
        refuseWithinCycle();
        synchronized (this) {
            DestinationStart start = config.destinations().stream().filter(d -> d.name().equals(name))
                    .map(NamedDestination::start).findFirst().orElse(DestinationStart.CURRENT_POSITION);
            NamedDestination replacement = new NamedDestination(name, destination, policy, start);
            ReconfigurationRules.checkDestination(config, replacement, true);
            config.destinations(config.destinations().stream().map(d -> d.name().equals(name) ? replacement : d)
                    .toList());
        }
        runner.forgetAll();
        awaitCycles(List.copyOf(locks.keySet()));
        LOG.info("Engine '{}': destination '{}' replaced live ({}); its positions stay", config.name(), name, policy);
    }

    @Override
    public void removeDestination(String name) {
        checkOpen();
        refuseWithinCycle();
        synchronized (this) {
            ReconfigurationRules.checkRemoval(config, name);
            config.destinations(config.destinations().stream().filter(d -> !d.name().equals(name)).toList());
        }
        runner.forgetAll();
        awaitCycles(List.copyOf(locks.keySet()));
        LOG.info("Engine '{}': destination '{}' removed live; its positions stay in the store", config.name(), name);
    }

    /** Caller holds "this" and has validated {@code object}: makes it the object of its name, polled if started. */
    private void install(TrackedObject object) {
        locks.computeIfAbsent(object.name(), n -> new ReentrantLock(true));
        failureLogs.put(object.name(), new FailureLog(object.name(), config.clock()));
        Map<String, TrackedObject> next = new LinkedHashMap<>(objects);
        next.put(object.name(), object);
        objects = next;
        if (state.get() == State.STARTED) {
            // A cycle of the object's former poller may still run: this one's first cycle queues behind it on
            // the object's lock, and then finds itself the current object; the former one would not.
            Poller poller = new Poller(object, config.pollInterval(object), scheduler, this::runPolled,
                    failureLogs.get(object.name()));
            pollers.put(object.name(), poller);
            poller.start();
        }
    }

    /** Caller holds "this". */
    private void stopPoller(String objectName) {
        Poller poller = pollers.remove(objectName);
        if (poller != null) {
            poller.stop();
        }
    }

    /**
     * A removal or change waits for running cycles: on a cycle's own thread (a listener, a destination) it would
     * wait for itself or, with two such cycles, for each other. Refused before anything changes.
     */
    private void refuseWithinCycle() {
        locks.forEach((name, lock) -> {
            if (lock.isHeldByCurrentThread()) {
                throw new TidemarkException(ErrorCode.ENGINE_STATE, "The engine '" + config.name() + "' cannot be"
                        + " reconfigured from within a cycle of '" + name + "' (a listener or a destination): the"
                        + " change would wait for that cycle to end; reconfigure from another thread");
            }
        });
    }

    /** Waits until no cycle of the named objects that started before this call still runs (lock, then release). */
    private void awaitCycles(List<String> objectNames) {
        for (String name : objectNames) {
            ReentrantLock lock = locks.get(name);
            if (lock != null) {
                lock.lock();
                lock.unlock();
            }
        }
    }

    /**
     * Change notifications follow the tracked objects: the subscription is replaced by one for the current set
     * (a notification arriving in between is not needed: the poll interval remains the safety net).
     */
    private void resubscribe() {
        AutoCloseable former;
        synchronized (this) {
            if (state.get() != State.STARTED) {
                return;
            }
            former = subscription;
            try {
                subscription = config.provider().subscribe(objects.values(), this::changesNotified);
            } catch (RuntimeException e) {
                subscription = null;
                LOG.warn("Change notifications could not be restarted; polling at the interval only: {}",
                        e.toString());
            }
        }
        closeQuietly(former);
    }

    @Override
    public void close() {
        ScheduledThreadPoolExecutor toStop;
        PollerThreadFactory toJoin;
        ScheduledThreadPoolExecutor probeToStop;
        PollerThreadFactory probeToJoin;
        AutoCloseable toUnsubscribe;
        synchronized (this) {
            if (state.getAndSet(State.CLOSED) == State.CLOSED) {
                return;
            }
            pollers.values().forEach(Poller::stop);
            toStop = scheduler;
            toJoin = threads;
            probeToStop = prober;
            probeToJoin = proberThreads;
            toUnsubscribe = subscription;
        }
        if (coordinator != null) {
            coordinator.stopTaking(); // first: no lease is taken while the cycles in flight finish
        }
        if (probeToStop != null) {
            probeToStop.shutdownNow();
        }
        closeQuietly(toUnsubscribe);
        if (toStop != null) {
            toStop.shutdown();
            try {
                if (!toStop.awaitTermination(config.shutdownTimeout().toNanos(), TimeUnit.NANOSECONDS)) {
                    LOG.warn("Engine '{}': cycles still running after {}; cancelling them (their watermarks stay)",
                            config.name(), config.shutdownTimeout());
                    calls.cancel();
                    toStop.shutdownNow();
                    toStop.awaitTermination(CANCEL_GRACE.toNanos(), TimeUnit.NANOSECONDS);
                }
                if (!probeToJoin.joinAll(CANCEL_GRACE.toNanos(), TimeUnit.NANOSECONDS)) {
                    LOG.error("Engine '{}': the reachability probe did not stop; the driver is not responding",
                            config.name());
                }
                if (!toJoin.joinAll(CANCEL_GRACE.toNanos(), TimeUnit.NANOSECONDS)) {
                    LOG.error("Engine '{}': a poller thread did not stop; a destination or the driver is not"
                            + " responding to cancellation", config.name());
                }
            } catch (InterruptedException e) {
                calls.cancel();
                toStop.shutdownNow();
                Thread.currentThread().interrupt();
            }
        }
        if (coordinator != null && toStop != null) {
            // After the cycles (or once they were given up on): the leases are handed back at once, and a cycle
            // that did not stop can no longer write (its writes are fenced).
            coordinator.close();
        }
        LOG.info("Engine '{}' closed", config.name());
    }

    private static void closeQuietly(AutoCloseable closeable) {
        if (closeable == null) {
            return;
        }
        try {
            closeable.close();
        } catch (Exception e) {
            LOG.warn("Stopping change notifications failed: {}", e.toString());
        }
    }

    private void checkOpen() {
        if (state.get() == State.CLOSED) {
            throw new TidemarkException(ErrorCode.ENGINE_STATE, "The engine '" + config.name() + "' is closed");
        }
    }

    private void destination(String name) {
        if (config.destinations().stream().noneMatch(d -> d.name().equals(name))) {
            throw new TidemarkException(ErrorCode.UNKNOWN_DESTINATION, "The engine '" + config.name()
                    + "' does not deliver to a destination named '" + name + "'; it delivers to "
                    + config.destinations().stream().map(NamedDestination::name).toList());
        }
    }

    private TrackedObject object(String name) {
        TrackedObject object = objects.get(name);
        if (object == null) {
            throw new TidemarkException(ErrorCode.UNKNOWN_OBJECT, "The engine '" + config.name()
                    + "' does not track an object named '" + name + "'; it tracks " + objects.keySet());
        }
        return object;
    }
}
