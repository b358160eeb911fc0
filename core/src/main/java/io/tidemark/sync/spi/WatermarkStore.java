package io.tidemark.sync.spi;

import io.tidemark.sync.CheckReport;

import java.time.Instant;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.OptionalLong;

/**
 * Keeps each tracked object's watermark and bookkeeping. Writes of the version are compare-and-set: a store
 * never lets a version go down and never overwrites a version another writer stored in between.
 *
 * <p>{@link io.tidemark.sync.InMemoryWatermarkStore} is for tests and throw-away runs;
 * {@link io.tidemark.sync.JdbcWatermarkStore} keeps state in the database.
 */
public interface WatermarkStore {

    Optional<WatermarkState> load(String objectName);

    /** Every object the store knows, by name. */
    Map<String, WatermarkState> loadAll();

    /**
     * Stores {@code newVersion} and the {@code source} that produced it if the stored version is still
     * {@code expected} (empty meaning "none stored") and the stored source is {@code source} or none, records the
     * poll time and clears the last error. A version stored without a source (written before sources were
     * recorded, see {@link WatermarkState#source()}) adopts {@code source} here.
     *
     * @param source the provider's {@link ChangeProvider#sourceIdentity identity} of the object's procedure
     * @throws io.tidemark.sync.TidemarkException {@code WATERMARK_REGRESSION} when {@code newVersion} is lower
     *         than the stored version, {@code WATERMARK_SOURCE_CHANGED} when another source is stored,
     *         {@code WATERMARK_CONFLICT} when the stored version is no longer {@code expected}; nothing is written
     *         in any of these cases
     */
    default void advance(String objectName, String source, OptionalLong expected, long newVersion, Instant at) {
        advance(objectName, source, expected, newVersion, List.of(), at);
    }

    /**
     * As {@link #advance(String, String, OptionalLong, long, Instant)}, and moves the given destinations' positions
     * in the same transaction, each with compare-and-set: a position is written only if the store still holds its
     * {@link PositionAdvance#expected() expected} one (empty meaning none stored, or stored without a version). The
     * watermark and the positions are written together or not at all, so they never disagree.
     *
     * @param newVersion the object's new watermark: the lowest position of the destinations the engine delivers to
     * @throws io.tidemark.sync.TidemarkException as the other {@code advance}; {@code WATERMARK_CONFLICT} also when a
     *         position is no longer the expected one, {@code WATERMARK_REGRESSION} when a position would go down
     */
    void advance(String objectName, String source, OptionalLong expected, long newVersion,
                 List<PositionAdvance> positions, Instant at);

    /**
     * Pauses or resumes one destination of the object: the engine delivers nothing to a paused destination, and
     * its position, which stays, keeps holding the object's watermark back so that it can catch up when resumed.
     */
    void setDestinationPaused(String objectName, String destination, boolean paused, Instant at);

    /**
     * Records {@code source} as the producer of the stored version, keeping the version: the explicit way to let
     * an object re-pointed at another procedure continue from the stored position. Does nothing when no
     * version is stored.
     */
    void adoptSource(String objectName, String source, Instant at);

    /**
     * Records a cycle's error without moving the version (null clears it), with the time. The engine calls it only
     * when the error changes: when a cycle fails differently from the error stored, and once when a clean cycle
     * follows a failure. An idle object that keeps polling writes nothing.
     */
    void recordPoll(String objectName, Instant at, String error);

    /** Pauses or resumes the object; the engine skips paused objects. */
    void setPaused(String objectName, boolean paused, Instant at);

    /**
     * Forgets the object's version, its source and its destinations' positions, so that its next cycle is a first
     * cycle again (and follows its {@link io.tidemark.sync.InitialSync}). The pause flags, the object's and its
     * destinations', are kept.
     */
    void reset(String objectName, Instant at);

    /**
     * The store's part of the engine's start-up check ({@link io.tidemark.sync.SyncEngine#check()}): that it can
     * be reached and read. A store that cannot be reached is one problem with
     * {@link io.tidemark.sync.ErrorCode#CONNECTION_FAILED}. Writes nothing. The default checks nothing.
     */
    default List<CheckReport.Problem> check() {
        return List.of();
    }
}
