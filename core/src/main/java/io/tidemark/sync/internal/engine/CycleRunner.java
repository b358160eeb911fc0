package io.tidemark.sync.internal.engine;

import io.tidemark.sync.Change;
import io.tidemark.sync.DestinationReport;
import io.tidemark.sync.Diagnostic;
import io.tidemark.sync.ErrorCode;
import io.tidemark.sync.InitialSync;
import io.tidemark.sync.ObjectReport;
import io.tidemark.sync.Outcome;
import io.tidemark.sync.SyncEngine;
import io.tidemark.sync.SyncType;
import io.tidemark.sync.TidemarkException;
import io.tidemark.sync.TrackedObject;
import io.tidemark.sync.internal.contract.ChangeReader;
import io.tidemark.sync.internal.contract.ResponseScanner;
import io.tidemark.sync.internal.coordination.Fences;
import io.tidemark.sync.internal.coordination.InFlightPage;
import io.tidemark.sync.internal.contract.ResponseSummary;
import io.tidemark.sync.internal.store.WatermarkConflicts;
import io.tidemark.sync.spi.CallContext;
import io.tidemark.sync.spi.PositionAdvance;
import io.tidemark.sync.spi.ResponsePayload;
import io.tidemark.sync.spi.SyncListener;
import io.tidemark.sync.spi.WatermarkState;
import io.tidemark.sync.spi.WatermarkStore;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.function.Supplier;
import java.util.OptionalLong;
import java.util.concurrent.ConcurrentHashMap;

/**
 * One cycle of one object, following the version rules:
 * <ol>
 *   <li>no stored watermark is not 0: the first cycle follows the object's {@link InitialSync} (a FULL one
 *       says {@code "initial":true}); a stored 0 is asked for as {@code fromVersion: 0} like any other;</li>
 *   <li>an incremental first cycle records the server's (or the seeding procedure's) version and delivers
 *       nothing, discarding seed rows with a warning;</li>
 *   <li>after success the highest {@code $version} is stored, else {@code Metadata.Sync.Version}; a diff that
 *       returned no changes writes nothing unless something must be recorded, and stores a moved version at most
 *       every {@link #EMPTY_MOVE_INTERVAL};</li>
 *   <li>each destination has its own position, stored only after it accepted every page of a response; the
 *       object's watermark is the lowest position. Destinations at the same position share one call; a
 *       destination that blocks holds back only itself, and catches up from its own position;</li>
 *   <li>never backwards, written with compare-and-set (positions and watermark in one write);</li>
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
    private final PositionSignals positions;
    /**
     * When each object's last cycle ran, kept here rather than written per poll: an idle object writes nothing
     * to the store (a write per poll per object would cost a transaction, and on PostgreSQL a transaction id).
     */
    private final Map<String, Instant> lastPolled = new ConcurrentHashMap<>();
    /**
     * When this engine last wrote each object's positions. A version that moved without changes is stored at most
     * this often: often enough that a lag computed from the stored version stays current and that a source whose
     * old versions expire (SQL Server's change tracking retention) never sees the stored one expire while idle.
     */
    static final Duration EMPTY_MOVE_INTERVAL = Duration.ofSeconds(10);
    private final Map<String, Instant> lastWritten = new ConcurrentHashMap<>();
    /** The stored state as this engine last read and wrote it, for polled cycles that may skip the read. */
    private final KnownStates known = new KnownStates();
    /** The {@link KnownStates#generation} each object's running cycle started in (one cycle per object at a time). */
    private final Map<String, Long> cycleGenerations = new ConcurrentHashMap<>();
    /** The error each object's row is known to hold (as last read or written), so an unchanged one is not rewritten. */
    private final Map<String, String> storedErrors = new ConcurrentHashMap<>();

    /** With coordination: the destinations of the live instances, whose stored positions hold the watermark too. */
    private final Supplier<Set<String>> liveDestinations;

    CycleRunner(EngineConfig config, CallContext calls) {
        this(config, calls, Set::of);
    }

    CycleRunner(EngineConfig config, CallContext calls, Supplier<Set<String>> liveDestinations) {
        this.liveDestinations = liveDestinations;
        this.config = config;
        this.calls = calls;
        this.delivery = new PageDelivery(config, calls);
        this.positions = new PositionSignals(config);
    }

    /** When this engine last ran a cycle of the object (in memory; the store is not written per poll). */
    Optional<Instant> lastPolled(String objectName) {
        return Optional.ofNullable(lastPolled.get(objectName));
    }

    /** What this engine's cycles may forget: the engine's own pause, resume, reset or adoption changed the row. */
    void forget(String objectName) {
        known.forget(objectName);
    }

    /** The engine's objects or destinations changed live: every object's next cycle reads the store. */
    void forgetAll() {
        known.forgetAll();
    }

    /** A cycle that reads the stored state first. */
    ObjectReport run(TrackedObject object) {
        return run(object, false);
    }

    /**
     * A cycle; with {@code mayReuseState} (a polled cycle without coordination) it starts from the state this engine
     * last read and wrote itself when that is fresh enough ({@link KnownStates}), without reading the store.
     */
    ObjectReport run(TrackedObject object, boolean mayReuseState) {
        Instant startedAt = config.clock().instant();
        long started = System.nanoTime();
        ObjectReport.Builder report = ObjectReport.builder(object.name(), startedAt);
        WatermarkStore store = config.watermarks();
        OptionalLong after = OptionalLong.empty();
        Optional<Instant> lastMove = Optional.empty();
        lastPolled.put(object.name(), startedAt);
        long generation = known.generation(object.name());
        cycleGenerations.put(object.name(), generation);
        try {
            Optional<WatermarkState> state = mayReuseState ? known.fresh(object.name(), startedAt) : Optional.empty();
            if (state.isEmpty()) {
                state = store.load(object.name());
                state.ifPresent(s -> known.read(object.name(), s, startedAt, generation));
            }
            lastMove = state.flatMap(WatermarkState::lastMovedAt);
            rememberStoredError(object.name(), state.flatMap(WatermarkState::lastError).orElse(null));
            OptionalLong stored = state.map(WatermarkState::version).orElse(OptionalLong.empty());
            report.fromVersion(stored).toVersion(stored);
            after = stored;
            if (state.isPresent() && state.get().paused()) {
                return finish(report.outcome(Outcome.PAUSED), started);
            }
            String source = config.sourceIdentity(object);
            checkSource(object, state, stored, source);
            PositionPlan plan = PositionPlan.of(state, config.destinations(), liveDestinations.get());
            if (plan.firstCycle() && object.initialSync() == InitialSync.INCREMENTAL) {
                after = OptionalLong.of(seed(object, source, plan, report));
            } else {
                boolean adopt = stored.isPresent() && state.get().source().isEmpty();
                after = sync(object, source, adopt, plan, report);
            }
        } catch (TidemarkException e) {
            fail(object, report, e);
        } catch (RuntimeException e) {
            fail(object, report, TidemarkException.forObject(ErrorCode.INTERNAL, object.name(),
                    "the cycle failed unexpectedly: " + e, e));
        }
        report.diagnostics(diagnose(object, after));
        ObjectReport finished = finish(report, started);
        if (!finished.isSuccess()) {
            known.forget(object.name()); // the next cycle reads what the store holds
        }
        positions.observe(object, finished, lastMove);
        return finished;
    }

    /**
     * Fails closed when the stored version was produced by another procedure than the one the object calls now:
     * continuing would ask the new procedure for changes after someone else's position.
     */
    private static void checkSource(TrackedObject object, Optional<WatermarkState> state, OptionalLong stored,
                                    String source) {
        Optional<String> storedSource = state.flatMap(WatermarkState::source);
        if (CallRules.sourceChanged(stored, storedSource, source)) {
            throw WatermarkConflicts.sourceChanged(object.name(), stored, storedSource.get(), source);
        }
    }

    /** Returns the version stored: every destination starts there. */
    private long seed(TrackedObject object, String source, PositionPlan plan, ObjectReport.Builder report) {
        IncrementalSeed.Seeded seeded = IncrementalSeed.seed(object, config.provider(), calls);
        seeded.seedResponse().ifPresent(summary ->
                report.changeCount(summary.rowCount()).sync(summary.syncType(), summary.reasonCode()));
        seeded.discardWarning().ifPresent(warning -> {
            LOG.warn("[{}] procedure {} {}. Return no rows when mode is \"seed\", or use InitialSync.FULL"
                    + " if the history was wanted.", object.name(), object.procedure(), warning);
            report.warning(warning);
        });
        long version = seeded.version();
        List<PositionPlan.Entry> everyone = plan.entries();
        advance(object, source, plan, everyone, version);
        report.outcome(Outcome.SEEDED).toVersion(OptionalLong.of(version));
        LOG.info("[{}] seeded at version {}; changes after it will be delivered", object.name(), version);
        return version;
    }

    /**
     * One call per distinct position of the destinations taking part (those at the same position share it), each
     * response delivered to those destinations only, each group's positions and the watermark written as soon as
     * the group is done. Returns the watermark after the cycle.
     */
    private OptionalLong sync(TrackedObject object, String source, boolean adopt, PositionPlan plan,
                              ObjectReport.Builder report) {
        Map<String, DestinationReport> reports = new LinkedHashMap<>();
        Map<String, OptionalLong> before = new LinkedHashMap<>();
        plan.entries().forEach(e -> before.put(e.name(), e.position));
        List<TidemarkException> blocked = new ArrayList<>();
        CycleTotals totals = new CycleTotals();
        // With coordination, on the first cycle after the lease changed hands: the page the previous holder was
        // delivering when it stopped, to be delivered again first, under the same key.
        InFlightPage inherited = Fences.takeInherited(object.name()).orElse(null);
        try {
            for (List<PositionPlan.Entry> group : plan.groups()) {
                List<PositionPlan.Entry> ready = new ArrayList<>();
                for (PositionPlan.Entry e : group) {
                    Optional<TidemarkException> deferred = delivery.deferred(object, e.destination);
                    if (deferred.isPresent()) {
                        reports.put(e.name(), destinationReport(e, before, Outcome.BLOCKED, null, deferred.get()));
                        blocked.add(deferred.get());
                    } else {
                        ready.add(e);
                    }
                }
                // Members the page in flight was not offered to (a destination added since, joining the group)
                // are called as usual, apart: the recorded members still get the page under its key.
                List<PositionPlan.Entry> others = !inheritedAt(inherited, ready) ? List.of() : ready.stream()
                        .filter(e -> !inherited.destinations().contains(e.name())).toList();
                if (!others.isEmpty() && others.size() < ready.size()) {
                    ready.removeAll(others);
                    syncGroup(object, source, adopt, plan, ready, totals, report, reports, before, blocked, inherited);
                    ready = new ArrayList<>(others);
                }
                if (!ready.isEmpty()) {
                    syncGroup(object, source, adopt, plan, ready, totals, report, reports, before, blocked, inherited);
                }
            }
        } catch (RuntimeException e) {
            if (inherited != null) {
                // Not delivered, or its positions not written: the next cycle tries again under the same key (it
                // checks again that the positions stand where the page left them).
                Fences.restoreInherited(object.name(), inherited);
            }
            throw e;
        }
        for (PositionPlan.Entry e : plan.entries()) {
            if (e.paused) {
                reports.put(e.name(), destinationReport(e, before, Outcome.PAUSED, null, null));
            }
        }
        List<DestinationReport> ordered = new ArrayList<>();
        plan.entries().forEach(e -> ordered.add(reports.get(e.name())));
        report.destinations(ordered)
                .toVersion(plan.watermark())
                .changeCount(totals.changes)
                .pageCount(totals.pages)
                .deadLetteredPages(totals.deadLettered)
                .fullBatch(totals.fullBatch);
        boolean anyPaused = plan.entries().stream().anyMatch(e -> e.paused);
        if (ordered.stream().allMatch(r -> r.outcome() == Outcome.PAUSED)) {
            report.outcome(Outcome.PAUSED);
        } else if (!blocked.isEmpty() && ordered.stream().noneMatch(r -> r.outcome() == Outcome.DELIVERED
                || r.outcome() == Outcome.NO_CHANGES)) {
            throw blocked.get(0); // nothing could move: the object is blocked
        } else {
            report.outcome(totals.pages > 0 ? Outcome.DELIVERED : Outcome.NO_CHANGES);
            if (!blocked.isEmpty()) {
                // The others moved on; the blocked ones keep their positions. The row says why they lag.
                blocked.forEach(e -> report.warning(e.getMessage()));
                recordError(object, blocked.get(0));
            } else if (storedErrors.containsKey(object.name())) {
                Instant at = config.clock().instant();
                config.watermarks().recordPoll(object.name(), at, null);
                storedErrors.remove(object.name());
                // Else the next cycles reusing the known state would find the old error there and clear it again,
                // one write per cycle until the state is read again.
                known.errorCleared(object.name(), at, cycleGenerations.getOrDefault(object.name(), -1L));
            }
        }
        if (anyPaused) {
            LOG.debug("[{}] paused destinations: {}", object.name(), plan.entries().stream()
                    .filter(e -> e.paused).map(PositionPlan.Entry::name).toList());
        }
        return plan.watermark();
    }

    /** One call from the group's position, its response delivered to the group, their positions written. */
    private void syncGroup(TrackedObject object, String source, boolean adopt, PositionPlan plan,
                           List<PositionPlan.Entry> group, CycleTotals totals, ObjectReport.Builder report,
                           Map<String, DestinationReport> reports, Map<String, OptionalLong> before,
                           List<TidemarkException> blocked, InFlightPage inherited) {
        OptionalLong position = group.get(0).position;
        Resumed resumed = resume(object, group, inherited);
        long from = resumed != null ? resumed.from() : position.orElse(0L);
        try (ResponsePayload payload = resumed != null ? resumed.payload()
                : config.provider().invoke(object, CallRules.request(object, position), calls)) {
            ResponseSummary summary = resumed != null ? resumed.summary() : ResponseScanner.scan(object.name(), payload);
            long next = CallRules.versionToStore(object.name(), position, summary, "watermark",
                    WatermarkConflicts.regressionAdvice(object.name()));
            if (totals.calls++ == 0 || summary.rowCount() > 0 && totals.changes == 0) {
                report.sync(summary.syncType(), summary.reasonCode());
            }
            if (summary.rowCount() == 0) {
                if (mustStoreWithoutChanges(object, plan, group, position, next, adopt, summary)) {
                    advance(object, source, plan, group, next);
                }
                group.forEach(e -> reports.put(e.name(), destinationReport(e, before, Outcome.NO_CHANGES, null,
                        null)));
                LOG.debug("[{}] no changes after {} for {}; version now {}", object.name(), from,
                        names(group), next);
                return;
            }
            // On the object's very first cycle no destination has a position to fall back to: a destination that
            // blocks there would later read as one added afterwards. So that cycle succeeds for all or for none.
            Map<String, PageDelivery.Result> results = delivery.deliver(object, payload, summary, from,
                    resumed != null ? resumed.page() : 1, group.stream().map(e -> e.destination).toList(),
                    plan.firstCycle(), (destinations, version) -> {
                        if (position.isEmpty() || version > position.getAsLong()) { // a resumed page's are behind
                            advance(object, source, plan, group.stream()
                                    .filter(e -> destinations.contains(e.destination)).toList(), version);
                        }
                    });
            List<PositionPlan.Entry> accepted = new ArrayList<>();
            for (PositionPlan.Entry e : group) {
                PageDelivery.Result r = results.get(e.name());
                if (r.blocked == null) {
                    accepted.add(e);
                } else {
                    blocked.add(r.blocked);
                }
            }
            if (!accepted.isEmpty()) {
                advance(object, source, plan, accepted, next);
                // A resumed response's pages before the one in flight were delivered before the failover.
                totals.changes += resumed == null ? summary.rowCount()
                        : summary.rowCount() - (long) (resumed.page() - 1) * config.pageSize(object);
                totals.fullBatch |= object.maxRows().isPresent()
                        && summary.rowCount() >= object.maxRows().getAsInt();
            }
            int pages = 0;
            for (PositionPlan.Entry e : group) {
                PageDelivery.Result r = results.get(e.name());
                pages = Math.max(pages, r.pages);
                totals.deadLettered += r.deadLettered;
                reports.put(e.name(), destinationReport(e, before,
                        r.blocked == null ? Outcome.DELIVERED : Outcome.BLOCKED, r, r.blocked));
            }
            totals.pages += pages;
            LOG.debug("[{}] delivered {} changes ({} {} reason {}) from {} to {} for {}", object.name(),
                    summary.rowCount(), summary.syncType(), summary.reasonCode(), from, next, names(accepted));
        }
    }

    /**
     * Whether a call that returned no changes still writes the positions: when something must be recorded (a first
     * position, an adopted source, a removed destination's hold released, a full snapshot's version, which the next
     * call would otherwise ask for again), or when its version moved and this engine has not written the object for
     * {@link #EMPTY_MOVE_INTERVAL}. Otherwise nothing is written: a version that moves without changes (a generated
     * outbox's horizon moves with every transaction of the database, the store's own writes included) is read again
     * from the stored one at no loss, and a write per such call would cost a transaction each time.
     */
    private boolean mustStoreWithoutChanges(TrackedObject object, PositionPlan plan, List<PositionPlan.Entry> group,
                                            OptionalLong position, long next, boolean adopt, ResponseSummary summary) {
        if (position.isEmpty() || adopt || group.stream().anyMatch(e -> e.stored.isEmpty())) {
            return true;
        }
        long standing = position.getAsLong();
        if (plan.watermarkAfter(group, standing) != plan.watermark().orElse(standing)) {
            return true; // a removed destination no longer holds the watermark back
        }
        if (next == standing) {
            return false;
        }
        if (summary.syncType() != SyncType.DIFF || summary.reasonCode() != 0) {
            return true;
        }
        Instant written = lastWritten.get(object.name());
        return written == null
                || !config.clock().instant().isBefore(written.plus(EMPTY_MOVE_INTERVAL));
    }

    /**
     * The inherited page in flight, read again, when it is this group's: every member was offered it (so took
     * every page before it) and stands exactly at the position recorded before it, and the page size is the one
     * that cut it. Calls the procedure from the range's start and keeps the rows up to its end, which must be as
     * many as the page's response held then, so that the page comes back with the same changes under the same key.
     * Null (and no payload kept) otherwise: the group is then called from its position as usual.
     */
    private Resumed resume(TrackedObject object, List<PositionPlan.Entry> group, InFlightPage page) {
        OptionalLong position = group.get(0).position;
        int pageSize = config.pageSize(object);
        if (!inheritedAt(page, group) || !page.destinations().containsAll(names(group))) {
            return null;
        }
        if (page.pageSize() != pageSize) {
            // Cut at another size, the same page number would hold other rows: under the old key, a destination
            // that applied the old page would drop them as a duplicate, and rows before them would be skipped.
            LOG.info("[{}] the page in flight when the previous holder stopped ({}/{} of {}-{}) was cut at page size"
                    + " {}, the object's is {} now; delivering from the position {} as usual", object.name(),
                    page.page(), page.pages(), page.fromVersion(), page.toVersion(), page.pageSize(), pageSize,
                    position.getAsLong());
            return null;
        }
        ResponsePayload payload = config.provider().invoke(object,
                CallRules.request(object, OptionalLong.of(page.fromVersion())), calls);
        try {
            ResponseSummary summary = ResponseScanner.scan(object.name(), payload);
            long rows = summary.resumableBetweenPages() ? rowsUpTo(object, payload, page.toVersion()) : -1;
            if (rows == page.total() && (rows + pageSize - 1) / pageSize == page.pages()) {
                LOG.info("[{}] delivering page {}/{} of {}:{}-{} again for {}: it was in flight when the previous"
                                + " holder of the lease stopped, and keeps its idempotency key", object.name(),
                        page.page(), page.pages(), object.name(), page.fromVersion(), page.toVersion(), names(group));
                return new Resumed(payload, summary.cutAt(page.toVersion(), rows), page.fromVersion(), page.page());
            }
            LOG.info("[{}] the page in flight when the previous holder stopped ({}/{} of {}-{}) cannot be read again"
                    + " as it was ({} rows up to {} now, {} then); delivering from the position {} as usual",
                    object.name(), page.page(), page.pages(), page.fromVersion(), page.toVersion(), rows,
                    page.toVersion(), page.total(), position.getAsLong());
            payload.close();
            return null;
        } catch (RuntimeException e) {
            payload.close();
            throw e;
        }
    }

    /** Whether {@code page} was left where {@code group} (at one position) stands. */
    private static boolean inheritedAt(InFlightPage page, List<PositionPlan.Entry> group) {
        OptionalLong position = group.isEmpty() ? OptionalLong.empty() : group.get(0).position;
        return page != null && position.isPresent() && page.resumesAt(position.getAsLong());
    }

    /** How many rows the (ascending) response holds up to {@code version}, -1 when none is exactly at it. */
    private static long rowsUpTo(TrackedObject object, ResponsePayload payload, long version) {
        long rows = 0;
        long highest = Long.MIN_VALUE;
        try (ChangeReader reader = new ChangeReader(object.name(), payload)) {
            for (List<Change> page = reader.nextPage(1024); !page.isEmpty(); page = reader.nextPage(1024)) {
                for (Change change : page) {
                    long v = change.version().orElseThrow();
                    if (v > version) {
                        return highest == version ? rows : -1;
                    }
                    highest = v;
                    rows++;
                }
            }
        }
        return highest == version ? rows : -1;
    }

    /** A page in flight read again: its response cut to the range it had, and the page to start at. */
    private record Resumed(ResponsePayload payload, ResponseSummary summary, long from, int page) {
    }

    private static DestinationReport destinationReport(PositionPlan.Entry e, Map<String, OptionalLong> before,
                                                       Outcome outcome, PageDelivery.Result result,
                                                       TidemarkException error) {
        return new DestinationReport(e.name(), outcome, before.get(e.name()), e.position,
                result == null ? 0 : result.pages, result == null ? 0 : result.deadLettered,
                Optional.ofNullable(error));
    }

    private static List<String> names(List<PositionPlan.Entry> entries) {
        return entries.stream().map(PositionPlan.Entry::name).toList();
    }

    /**
     * Stores {@code moved}'s positions at {@code version} and the object's watermark (their lowest) in one write;
     * the store clears the row's error with it. No retry here: a failed write fails the cycle, and the next one
     * starts again from what the store holds.
     */
    private void advance(TrackedObject object, String source, PositionPlan plan, List<PositionPlan.Entry> moved,
                         long version) {
        long watermark = plan.watermarkAfter(moved, version);
        List<PositionAdvance> advances = plan.advances(moved, version);
        Instant at = config.clock().instant();
        config.watermarks().advance(object.name(), source, plan.watermark(), watermark, advances, at);
        known.advanced(object.name(), source, watermark, advances, at,
                cycleGenerations.getOrDefault(object.name(), -1L));
        plan.moved(moved, version, watermark);
        lastWritten.put(object.name(), at);
        storedErrors.remove(object.name());
        moved.forEach(e -> delivery.moved(object, e.name(), version));
    }

    /** Records a blocked destination's error on the object's row, unless the row says so already. */
    private void recordError(TrackedObject object, TidemarkException e) {
        known.forget(object.name()); // the row's error is the store's to tell
        String error = e.code() + ": " + e.getMessage();
        if (!error.equals(storedErrors.get(object.name()))) {
            config.watermarks().recordPoll(object.name(), config.clock().instant(), error);
            storedErrors.put(object.name(), error);
        }
    }

    /** What one cycle did over all of its calls. */
    private static final class CycleTotals {
        int calls;
        long changes;
        int pages;
        int deadLettered;
        boolean fullBatch;
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
        List<Diagnostic> diagnostics = ProviderDiagnostics.run(config.provider(), object, version, LOG);
        for (Diagnostic d : diagnostics) {
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
}
