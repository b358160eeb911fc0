package io.tidemark.sync;

import io.tidemark.sync.spi.DestinationPosition;
import io.tidemark.sync.spi.WatermarkState;

import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.OptionalLong;

/**
 * The state of one tracked object as the engine sees it now: what the store holds, the last cycle's report,
 * and the provider's latest diagnostics. Answers "is it moving, and if not, why?".
 */
public final class ObjectStatus {

    private final TrackedObject object;
    private final WatermarkState stored;
    private final ObjectReport lastReport;
    private final List<Diagnostic> diagnostics;
    private final String leaseHolder;
    private final Activity activity;
    private final List<DestinationStatus> destinations;

    /** Where an object stands, summarised for dashboards: from the pause flag and the last cycle's outcome. */
    public enum State {
        /** No cycle has run in this engine yet (and the object is not paused). */
        NOT_RUN,
        /** The last cycle succeeded: delivered, found nothing new, or seeded (a destination may still be blocked). */
        OK,
        /** The last cycle failed (see {@link #lastReport()}'s error); the poller retries with backoff. */
        FAILING,
        /** The last cycle could deliver to no destination: every one taking part refused or asked to wait. */
        BLOCKED,
        /** Paused with {@link SyncEngine#pause(String)}. */
        PAUSED
    }

    /**
     * What the engine remembers in memory about the object's recent cycles (nothing of it is stored).
     *
     * @param consecutiveFailures failed or blocked cycles in a row, 0 after a success
     * @param failingSince        when the current run of failures began; null when not failing
     * @param lastSuccess         when the last successful cycle ended; null when none has
     * @param lastDeliveries      per destination name, when it last accepted or dead-lettered a page
     */
    public record Activity(int consecutiveFailures, Instant failingSince, Instant lastSuccess,
                           Map<String, Instant> lastDeliveries) {

        public static final Activity NONE = new Activity(0, null, null, Map.of());

        public Activity {
            lastDeliveries = Map.copyOf(lastDeliveries);
        }
    }

    public ObjectStatus(TrackedObject object, WatermarkState stored, ObjectReport lastReport,
                        List<Diagnostic> diagnostics) {
        this(object, stored, lastReport, diagnostics, null);
    }

    /** As above, with the instance id holding the object's lease (null: none, or no coordination). */
    public ObjectStatus(TrackedObject object, WatermarkState stored, ObjectReport lastReport,
                        List<Diagnostic> diagnostics, String leaseHolder) {
        this(object, stored, lastReport, diagnostics, Activity.NONE, List.copyOf(stored.positions().keySet()),
                leaseHolder);
    }

    /**
     * @param destinations the names of the destinations the engine delivers to, in order: one
     *                     {@link DestinationStatus} each
     */
    public ObjectStatus(TrackedObject object, WatermarkState stored, ObjectReport lastReport,
                        List<Diagnostic> diagnostics, Activity activity, List<String> destinations) {
        this(object, stored, lastReport, diagnostics, activity, destinations, null);
    }

    /**
     * @param destinations the names of the destinations the engine delivers to, in order
     * @param leaseHolder  the instance id holding the object's lease (null: none, or no coordination)
     */
    public ObjectStatus(TrackedObject object, WatermarkState stored, ObjectReport lastReport,
                        List<Diagnostic> diagnostics, Activity activity, List<String> destinations,
                        String leaseHolder) {
        this.object = Objects.requireNonNull(object, "object");
        this.stored = Objects.requireNonNull(stored, "stored");
        this.lastReport = lastReport;
        this.diagnostics = List.copyOf(diagnostics);
        this.activity = Objects.requireNonNull(activity, "activity");
        this.destinations = destinationStatuses(stored, lastReport, activity, destinations);
        this.leaseHolder = leaseHolder;
    }

    /**
     * With coordination, the id of the instance holding the object's lease now, as the database has it (this
     * instance's {@link Coordination#instanceId()} or another's); empty while no one holds it, and always without
     * coordination.
     */
    public Optional<String> leaseHolder() {
        return Optional.ofNullable(leaseHolder);
    }

    private static List<DestinationStatus> destinationStatuses(WatermarkState stored, ObjectReport last,
                                                               Activity activity, List<String> names) {
        List<DestinationStatus> statuses = new ArrayList<>(names.size());
        for (String name : names) {
            DestinationPosition position = stored.positions().get(name);
            Optional<DestinationReport> report = last == null ? Optional.empty()
                    : last.destinations().stream().filter(d -> d.destination().equals(name)).findFirst();
            // An object whose whole cycle was blocked reports no destinations; each one that took part blocked.
            boolean blocked = report.map(r -> r.outcome() == Outcome.BLOCKED).orElse(false)
                    || last != null && last.outcome() == Outcome.BLOCKED && last.destinations().isEmpty()
                    && (position == null || !position.paused());
            Optional<String> error = report.flatMap(DestinationReport::error).map(Throwable::getMessage)
                    .or(() -> blocked ? last.error().map(Throwable::getMessage) : Optional.empty());
            statuses.add(new DestinationStatus(name,
                    position == null || position.version() == null ? OptionalLong.empty()
                            : OptionalLong.of(position.version()),
                    position != null && position.paused(), blocked, error,
                    Optional.ofNullable(activity.lastDeliveries().get(name))));
        }
        return List.copyOf(statuses);
    }

    public TrackedObject object() {
        return object;
    }

    /**
     * Version, pause flag, last move and last error as stored; the last poll as this engine ran it (kept in memory,
     * since an idle object writes nothing to the store) or as stored, whichever is later.
     */
    public WatermarkState stored() {
        return stored;
    }

    /** The report of the last cycle this engine ran for the object. */
    public Optional<ObjectReport> lastReport() {
        return Optional.ofNullable(lastReport);
    }

    /** What the provider reported after the last cycle. */
    public List<Diagnostic> diagnostics() {
        return diagnostics;
    }

    public boolean paused() {
        return stored.paused();
    }

    public State state() {
        if (stored.paused()) {
            return State.PAUSED;
        }
        if (lastReport == null) {
            return State.NOT_RUN;
        }
        return switch (lastReport.outcome()) {
            case FAILED -> State.FAILING;
            case BLOCKED -> State.BLOCKED;
            // A paused object's report while the flag has since been cleared: it runs again soon.
            default -> State.OK;
        };
    }

    /** Whether the object, or any destination of it, is blocked (see {@link DestinationStatus#blocked()}). */
    public boolean blocked() {
        return state() == State.BLOCKED || destinations.stream().anyMatch(DestinationStatus::blocked);
    }

    /** The error stored with the object's watermark (the last failure, or why a destination lags); empty if none. */
    public Optional<String> lastError() {
        return stored.lastError();
    }

    /** When this engine's last successful cycle of the object ended; empty when none has since it was built. */
    public Optional<Instant> lastSuccess() {
        return Optional.ofNullable(activity.lastSuccess());
    }

    /** Failed or blocked cycles in a row, as this engine ran them; 0 after a success. */
    public int consecutiveFailures() {
        return activity.consecutiveFailures();
    }

    /** When the current run of failed or blocked cycles began; empty when the object is not failing. */
    public Optional<Instant> failingSince() {
        return Optional.ofNullable(activity.failingSince());
    }

    /** One status per destination the engine delivers to, in the order they were added. */
    public List<DestinationStatus> destinations() {
        return destinations;
    }

    @Override
    public String toString() {
        return "ObjectStatus[" + stored + ", state=" + state() + ", last=" + lastReport + ", diagnostics="
                + diagnostics + ", destinations=" + destinations
                + (leaseHolder == null ? "" : ", leaseHolder=" + leaseHolder) + "]";
    }
}
