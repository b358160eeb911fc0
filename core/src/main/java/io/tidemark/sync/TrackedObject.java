package io.tidemark.sync;

import java.time.Duration;
import java.util.Objects;
import java.util.Optional;
import java.util.OptionalInt;

/**
 * One source the engine follows: a logical name (the key of its watermark) and the change procedure that
 * reports its changes. Immutable; every {@code with}-style method returns a new instance. The values are checked
 * when the engine is built ({@link SyncEngine.Builder#build()}), which reports every problem of every object at
 * once.
 *
 * <pre>{@code
 * TrackedObject.of("Items", "public.get_item_changes")
 *         .initialSync(InitialSync.INCREMENTAL)
 *         .maxRows(5_000)
 *         .pollInterval(Duration.ofSeconds(5));
 * }</pre>
 */
public final class TrackedObject {

    private final String name;
    private final String procedure;
    private final InitialSync initialSync;
    private final Duration pollInterval;
    private final Integer maxRows;
    private final Integer pageSize;
    private final String table;

    private TrackedObject(String name, String procedure, InitialSync initialSync, Duration pollInterval,
                          Integer maxRows, Integer pageSize, String table) {
        this.name = name;
        this.procedure = procedure;
        this.initialSync = initialSync;
        this.pollInterval = pollInterval;
        this.maxRows = maxRows;
        this.pageSize = pageSize;
        this.table = table;
    }

    /**
     * @param name      the logical name: the key of the stored watermark, shown in reports and logs
     * @param procedure the change procedure (SQL Server) or function (PostgreSQL), optionally schema-qualified;
     *                  the provider validates and quotes it
     */
    public static TrackedObject of(String name, String procedure) {
        return new TrackedObject(name, procedure == null ? null : procedure.strip(), InitialSync.FULL,
                null, null, null, null);
    }

    /** What the first cycle does when no watermark is stored. Default {@link InitialSync#FULL}. */
    public TrackedObject initialSync(InitialSync initialSync) {
        return new TrackedObject(name, procedure, initialSync, pollInterval, maxRows, pageSize, table);
    }

    /** How often this object is polled in the background; overrides the engine's default. */
    public TrackedObject pollInterval(Duration interval) {
        return new TrackedObject(name, procedure, initialSync, interval, maxRows, pageSize, table);
    }

    /**
     * A hint sent to the procedure as {@code "maxRows"}: return about this many rows per call, cutting only
     * between versions. While calls return changes, the background poller calls again at once instead of waiting
     * for the interval, so a backlog drains in bounded steps. Procedures that ignore the hint keep working.
     */
    public TrackedObject maxRows(int maxRows) {
        return new TrackedObject(name, procedure, initialSync, pollInterval, maxRows, pageSize, table);
    }

    /** The largest number of changes handed to a destination in one {@link ChangeBatch}; overrides the engine's. */
    public TrackedObject pageSize(int pageSize) {
        return new TrackedObject(name, procedure, initialSync, pollInterval, maxRows, pageSize, table);
    }

    /**
     * The table the procedure reads, for providers' diagnostics (for example the Change Tracking minimum valid
     * version on SQL Server, or the outbox a PostgreSQL function reads). Optional; null means none.
     */
    public TrackedObject table(String table) {
        return new TrackedObject(name, procedure, initialSync, pollInterval, maxRows, pageSize,
                table == null ? null : table.strip());
    }

    public String name() {
        return name;
    }

    public String procedure() {
        return procedure;
    }

    public InitialSync initialSync() {
        return initialSync;
    }

    public Optional<Duration> pollInterval() {
        return Optional.ofNullable(pollInterval);
    }

    public OptionalInt maxRows() {
        return maxRows == null ? OptionalInt.empty() : OptionalInt.of(maxRows);
    }

    public OptionalInt pageSize() {
        return pageSize == null ? OptionalInt.empty() : OptionalInt.of(pageSize);
    }

    public Optional<String> table() {
        return Optional.ofNullable(table);
    }

    @Override
    public boolean equals(Object o) {
        if (this == o) {
            return true;
        }
        if (!(o instanceof TrackedObject)) {
            return false;
        }
        TrackedObject that = (TrackedObject) o;
        return Objects.equals(name, that.name) && Objects.equals(procedure, that.procedure)
                && initialSync == that.initialSync
                && Objects.equals(pollInterval, that.pollInterval) && Objects.equals(maxRows, that.maxRows)
                && Objects.equals(pageSize, that.pageSize) && Objects.equals(table, that.table);
    }

    @Override
    public int hashCode() {
        return Objects.hash(name, procedure, initialSync, pollInterval, maxRows, pageSize, table);
    }

    @Override
    public String toString() {
        return "TrackedObject[" + name + " -> " + procedure + ", initialSync=" + initialSync + "]";
    }
}
