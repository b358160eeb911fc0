package io.tidemark.sync.internal.coordination;

import io.tidemark.sync.CheckReport;
import io.tidemark.sync.Coordination;
import io.tidemark.sync.ObjectReport;
import io.tidemark.sync.Outcome;
import io.tidemark.sync.internal.store.JdbcLeaseStore;
import io.tidemark.sync.spi.SyncListener;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.OptionalLong;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.Lock;
import java.util.function.Consumer;
import java.util.function.Function;
import java.util.function.Supplier;

/**
 * This instance's side of coordination: every renewal interval (a third of the lease duration), one round on one
 * connection that (after a first round that only sends the heartbeat, so that instances starting together count
 * each other before any takes a lease)
 * <ol>
 *   <li>sends the instance's heartbeat and counts the live instances;</li>
 *   <li>renews the leases it holds (a lease the database no longer grants is lost at once);</li>
 *   <li>hands back leases above its fair share, {@code ceil(objects / live instances)}, one whose object is not in a
 *       cycle at that moment (so an instance that joins gets objects within a round or two);</li>
 *   <li>takes free or expired leases up to its fair share, in an order of its own (so instances starting together
 *       do not all reach for the same object first).</li>
 * </ol>
 * A cycle runs only under a lease this instance holds ({@link #runHolding}), with the lease bound to its thread so
 * the stores fence its writes and delivery checks it before each page.
 */
public final class LeaseCoordinator {

    private static final Logger LOG = LoggerFactory.getLogger(LeaseCoordinator.class);

    private final Coordination coordination;
    private final JdbcLeaseStore store;
    private final Supplier<List<String>> objects;
    private final Supplier<List<String>> destinations;
    /** The destinations of the live instances of this object set, as of the last round (this instance's included). */
    private volatile Set<String> liveDestinations = Set.of();
    private final Function<String, Lock> cycleLocks;
    private final Consumer<String> acquired;
    private final Consumer<String> released;
    private final List<SyncListener> listeners;
    private final String engineName;
    private final Map<String, HeldLease> held = new ConcurrentHashMap<>();
    private ScheduledExecutorService rounds;
    /** False until the first round: it only announces the instance, so instances starting together see each other. */
    private volatile boolean announced;
    /** Set when the engine starts closing: the rounds go on renewing what is held (cycles are finishing) but take nothing. */
    private volatile boolean closing;

    /**
     * @param objects    the names of the objects this engine tracks, asked at every round
     * @param cycleLocks each object's cycle lock: a lease is handed back only while it is free
     * @param acquired   called with an object's name when this instance took its lease (to run a cycle at once)
     * @param released   called with an object's name when this instance gave up or lost its lease
     */
    public LeaseCoordinator(String engineName, Coordination coordination, JdbcLeaseStore store,
                            Supplier<List<String>> objects, Supplier<List<String>> destinations,
                            Function<String, Lock> cycleLocks,
                            Consumer<String> acquired, Consumer<String> released, List<SyncListener> listeners) {
        this.engineName = engineName;
        this.coordination = coordination;
        this.store = store;
        this.objects = objects;
        this.destinations = destinations;
        this.cycleLocks = cycleLocks;
        this.acquired = acquired;
        this.released = released;
        this.listeners = List.copyOf(listeners);
    }

    public String instanceId() {
        return coordination.instanceId();
    }

    public synchronized void start() {
        rounds = Executors.newSingleThreadScheduledExecutor(r -> {
            Thread t = new Thread(r, "tidemark-" + engineName + "-leases");
            t.setDaemon(true);
            return t;
        });
        long every = coordination.renewInterval().toNanos();
        rounds.scheduleWithFixedDelay(this::round, 0, every, TimeUnit.NANOSECONDS);
    }

    /**
     * Runs {@code cycle} under the object's lease, bound to this thread; without the lease, runs nothing and returns
     * a report saying another instance holds it.
     */
    public ObjectReport runHolding(String objectName, Supplier<ObjectReport> cycle) {
        HeldLease lease = held.get(objectName);
        if (lease == null || !lease.valid()) {
            return ObjectReport.builder(objectName, coordination.clock().instant())
                    .outcome(Outcome.LEASED_ELSEWHERE).duration(Duration.ZERO).build();
        }
        return Fences.under(lease, cycle);
    }

    /** The lease this instance holds on the object, if any and still valid. */
    public Optional<HeldLease> held(String objectName) {
        return Optional.ofNullable(held.get(objectName)).filter(HeldLease::valid);
    }

    /**
     * The destinations of the live instances tracking the same objects, as of the last round: their stored positions
     * hold an object's watermark back even here, where some of them may not be delivered to (see
     * {@link LiveDestinations}).
     */
    public Set<String> liveDestinations() {
        return liveDestinations;
    }

    /** The start-up check's part of coordination: the lease tables can be read. */
    public List<CheckReport.Problem> check() {
        return store.check();
    }

    /** Every unexpired lease as the database has it: object name to holder. */
    public Map<String, String> holders() {
        return store.inSession("read the leases", JdbcLeaseStore.Session::holders);
    }

    /** One round; a failure (the database unreachable) is logged, and the leases run out on their local deadlines. */
    void round() {
        try {
            store.inSession("renew the leases", session -> {
                roundIn(session);
                return null;
            });
        } catch (RuntimeException e) {
            LOG.warn("Engine '{}': lease round of instance '{}' failed: {}; leases not renewed stop at their local"
                    + " deadline", engineName, instanceId(), e.toString());
        }
    }

    private void roundIn(JdbcLeaseStore.Session session) {
        Duration duration = coordination.leaseDuration();
        String me = instanceId();
        List<String> names = objects.get();
        String objectSet = ObjectSet.of(names);
        List<String> ours = destinations.get();
        int live = Math.max(1, session.heartbeat(objectSet, me, LiveDestinations.toText(ours), duration));
        Set<String> union = new HashSet<>(ours);
        session.liveDestinations().forEach(text -> LiveDestinations.addTo(union, text));
        liveDestinations = Set.copyOf(union);
        if (!announced) {
            announced = true;
            return;
        }
        for (HeldLease lease : List.copyOf(held.values())) {
            Instant sent = coordination.clock().instant();
            if (!lease.lost() && session.renew(lease.objectName(), me, lease.epoch(), duration)) {
                lease.renewed(deadline(sent));
            } else {
                drop(lease, true);
            }
        }
        // Objects untracked on the running engine (live reconfiguration): their leases go back at once, or they
        // would be renewed for ever and count against this instance's share.
        for (HeldLease lease : List.copyOf(held.values())) {
            if (!names.contains(lease.objectName())) {
                drop(lease, false);
                session.release(lease.objectName(), me, lease.epoch());
            }
        }
        int share = (names.size() + live - 1) / live;
        if (held.size() > share) {
            handBack(session, held.size() - share);
        }
        if (held.size() < share && !closing) {
            take(session, names, share);
        }
    }

    /** Hands back {@code surplus} leases whose objects are between cycles; the others wait for the next round. */
    private void handBack(JdbcLeaseStore.Session session, int surplus) {
        List<HeldLease> candidates = new ArrayList<>(held.values());
        candidates.sort(Comparator.comparing(HeldLease::objectName).reversed());
        int given = 0;
        for (HeldLease lease : candidates) {
            if (given == surplus) {
                return;
            }
            Lock lock = cycleLocks.apply(lease.objectName());
            if (lock != null && !lock.tryLock()) {
                continue; // in a cycle: its pages and positions finish first
            }
            try {
                drop(lease, false);
                session.release(lease.objectName(), instanceId(), lease.epoch());
                given++;
            } finally {
                if (lock != null) {
                    lock.unlock();
                }
            }
        }
    }

    private void take(JdbcLeaseStore.Session session, List<String> names, int share) {
        List<String> order = new ArrayList<>(names);
        order.removeIf(held::containsKey);
        // An order of this instance's own: instances starting together try different objects first.
        order.sort(Comparator.comparingInt(name -> (instanceId() + '\u0000' + name).hashCode()));
        for (String name : order) {
            if (held.size() >= share || closing) { // closing: stopTaking() may come while this round takes
                return;
            }
            Instant sent = coordination.clock().instant();
            OptionalLong epoch = session.acquire(name, instanceId(), coordination.leaseDuration());
            if (epoch.isPresent()) {
                long taken = epoch.getAsLong();
                // The page the previous holder was delivering when it stopped, if it recorded one: the first
                // cycle delivers it again under its key.
                InFlightPage inherited = inFlight(session, name);
                HeldLease lease = new HeldLease(name, instanceId(), taken, coordination.clock(), deadline(sent),
                        page -> store.recordInFlight(name, instanceId(), taken, page.toText()), inherited);
                held.put(name, lease);
                LOG.info("[{}] lease taken by instance '{}' at epoch {}", name, instanceId(), epoch.getAsLong());
                notifyListeners(l -> l.onLeaseAcquired(name, instanceId(), epoch.getAsLong()));
                acquired.accept(name);
            }
        }
    }

    /**
     * The page in flight recorded on the lease row just taken, or null. A failure to read it is no failure to take
     * the lease (the database says this instance holds it): the object then goes on without re-delivering that
     * page under its key, rather than idling until the lease expires.
     */
    private InFlightPage inFlight(JdbcLeaseStore.Session session, String name) {
        try {
            return session.inFlight(name).flatMap(InFlightPage::parse).orElse(null);
        } catch (RuntimeException e) {
            LOG.warn("[{}] could not read the page in flight the previous holder recorded: {}; the object goes on"
                    + " from its positions", name, e.toString());
            return null;
        }
    }

    /** The local deadline of a lease whose renewal (or acquisition) was sent at {@code sent}. */
    private Instant deadline(Instant sent) {
        return sent.plus(coordination.leaseDuration()).minus(coordination.safetyMargin());
    }

    private void drop(HeldLease lease, boolean lost) {
        if (!held.remove(lease.objectName(), lease)) {
            return;
        }
        lease.markLost();
        if (lost) {
            LOG.warn("[{}] lease of instance '{}' at epoch {} was lost; another instance takes the object over",
                    lease.objectName(), instanceId(), lease.epoch());
        } else {
            LOG.info("[{}] lease handed back by instance '{}' (epoch {})", lease.objectName(), instanceId(),
                    lease.epoch());
        }
        notifyListeners(l -> l.onLeaseReleased(lease.objectName(), instanceId(), lease.epoch(), lost));
        released.accept(lease.objectName());
    }

    /**
     * The first step of a close, before the engine waits for its cycles: no lease is taken from now on (a lease
     * taken while the engine waits would only be handed back at the end, its object idle meanwhile), while the
     * leases held go on being renewed so that the cycles in flight can finish and write their positions.
     */
    public void stopTaking() {
        closing = true;
    }

    /**
     * At close, after the cycles ended (or were given up on): stops the rounds, hands every lease back and removes
     * the heartbeat, so the other instances take the objects over at their next round instead of after expiry.
     */
    public void close() {
        ScheduledExecutorService toStop;
        synchronized (this) {
            toStop = rounds;
            rounds = null;
        }
        if (toStop != null) {
            toStop.shutdownNow();
            try {
                toStop.awaitTermination(coordination.renewInterval().toMillis() + 10_000, TimeUnit.MILLISECONDS);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
        }
        try {
            store.inSession("hand the leases back", session -> {
                for (HeldLease lease : List.copyOf(held.values())) {
                    drop(lease, false);
                    session.release(lease.objectName(), instanceId(), lease.epoch());
                }
                session.leave(instanceId());
                return null;
            });
        } catch (RuntimeException e) {
            LOG.warn("Engine '{}': could not hand the leases of instance '{}' back ({}); they expire within {}",
                    engineName, instanceId(), e.toString(), coordination.leaseDuration());
        }
    }

    private void notifyListeners(Consumer<SyncListener> event) {
        for (SyncListener listener : listeners) {
            try {
                event.accept(listener);
            } catch (RuntimeException e) {
                LOG.warn("A listener failed on a lease event: {}", e.toString());
            }
        }
    }
}
