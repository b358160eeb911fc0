package io.tidemark.sync.spi;

import io.tidemark.sync.CheckReport;
import io.tidemark.sync.Diagnostic;
import io.tidemark.sync.TrackedObject;

import java.util.Collection;
import java.util.List;
import java.util.OptionalLong;
import java.util.function.Consumer;

/**
 * How the engine talks to one kind of database: calling change procedures, reading a server watermark,
 * reporting diagnostics and, where the database can, waking the engine when changes arrive.
 *
 * <p>Implementations are thread-safe: the engine calls them from several pollers at once. Every failure is a
 * {@link io.tidemark.sync.TidemarkException} whose code tells what went wrong.
 */
public interface ChangeProvider extends AutoCloseable {

    /** A short name for logs and reports, such as {@code "postgres"}. */
    String name();

    /**
     * Checks everything about the object that can be checked without a database (the procedure name above
     * all) and fails with {@link io.tidemark.sync.ErrorCode#INVALID_IDENTIFIER} before any SQL runs.
     * The engine calls it at {@code build()}.
     */
    void validate(TrackedObject object);

    /**
     * The provider's part of the engine's start-up check ({@link io.tidemark.sync.SyncEngine#check()}): that the
     * database can be reached and that each object's procedure exists with the contract's signature. Returns
     * every problem found, not only the first; a database that cannot be reached is one problem with
     * {@link io.tidemark.sync.ErrorCode#CONNECTION_FAILED}. Reads the catalog only, changes nothing, calls no
     * procedure. The default checks nothing.
     */
    default List<CheckReport.Problem> check(Collection<TrackedObject> objects) {
        return List.of();
    }

    /**
     * What produces the object's versions, as text stored with its watermark: the provider's {@link #name()} and
     * the procedure as the provider resolves it (for example {@code postgres:"public"."items_changes"}). When it
     * differs from the identity stored with the watermark, the engine refuses to continue from that watermark
     * ({@link io.tidemark.sync.ErrorCode#WATERMARK_SOURCE_CHANGED}). Two spellings of the same procedure must give
     * the same identity; runs no SQL. The default is the name and the procedure as configured.
     */
    default String sourceIdentity(TrackedObject object) {
        return name() + ":" + object.procedure();
    }

    /**
     * Calls the object's change procedure with the request and returns its response. No transaction is left
     * open and no connection is held when this returns.
     */
    ResponsePayload invoke(TrackedObject object, ChangeRequest request, CallContext context);

    /**
     * For the first cycle of an {@link io.tidemark.sync.InitialSync#INCREMENTAL} object: the server's current
     * version, when the provider can read one (SQL Server Change Tracking). Empty means "ask the procedure",
     * and the engine calls it with {@code mode: "seed"}.
     */
    OptionalLong currentVersion(TrackedObject object);

    /**
     * Checks run after each cycle, such as a Change Tracking version that aged out or an old transaction that
     * holds changes back. Implementations keep this cheap (rate-limit what needs a query).
     */
    default List<Diagnostic> diagnose(TrackedObject object, OptionalLong storedVersion) {
        return List.of();
    }

    /**
     * Starts change notifications for the objects, calling {@code wakeUp} with an object's name when it
     * probably has new changes. The poll interval stays the safety net. Closing the result stops them.
     * The default has no notifications.
     */
    default AutoCloseable subscribe(Collection<TrackedObject> objects, Consumer<String> wakeUp) {
        return () -> { };
    }

    /**
     * The engine no longer reads the object: it was untracked live ({@link io.tidemark.sync.SyncEngine#untrack}), and
     * none of its cycles runs any more. A provider that keeps changes for its readers (a replication slot held at
     * their lowest watermark) stops keeping them for this one; its stored watermark stays in the store, and tracked
     * again it is validated again, as any new object. The default does nothing.
     */
    default void untracked(TrackedObject object) {
    }

    /** What a {@link #probe} found out about the provider's database. */
    enum Reachability {
        /** A round trip succeeded: the database answers. */
        REACHABLE,
        /** It could not be reached (refused, timed out, still starting, shutting down). */
        UNREACHABLE,
        /** The provider cannot tell; the engine then relies on its backoff and on notifications. */
        UNKNOWN
    }

    /**
     * A cheap round trip to the database ({@code SELECT 1}), bounded by {@code timeout} where the provider can bound
     * it. While an object is failing because its database could not be reached
     * ({@link io.tidemark.sync.ErrorCode#CONNECTION_FAILED}), the engine probes a few times a second and retries such
     * objects at once when the answer is {@link Reachability#REACHABLE}, instead of waiting out their backoff.
     * Never throws. The default cannot tell ({@link Reachability#UNKNOWN}).
     */
    default Reachability probe(java.time.Duration timeout) {
        return Reachability.UNKNOWN;
    }

    /** Releases what the provider holds; the engine does not call this (the provider may be shared). */
    @Override
    default void close() {
    }
}
