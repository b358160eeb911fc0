package io.tidemark.sync;

import io.tidemark.sync.spi.WatermarkState;

import java.util.List;
import java.util.Objects;
import java.util.Optional;

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

    public ObjectStatus(TrackedObject object, WatermarkState stored, ObjectReport lastReport,
                        List<Diagnostic> diagnostics) {
        this(object, stored, lastReport, diagnostics, null);
    }

    /** As above, with the instance id holding the object's lease (null: none, or no coordination). */
    public ObjectStatus(TrackedObject object, WatermarkState stored, ObjectReport lastReport,
                        List<Diagnostic> diagnostics, String leaseHolder) {
        this.object = Objects.requireNonNull(object, "object");
        this.stored = Objects.requireNonNull(stored, "stored");
        this.lastReport = lastReport;
        this.diagnostics = List.copyOf(diagnostics);
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

    @Override
    public String toString() {
        return "ObjectStatus[" + stored + ", last=" + lastReport + ", diagnostics=" + diagnostics
                + (leaseHolder == null ? "" : ", leaseHolder=" + leaseHolder) + "]";
    }
}
