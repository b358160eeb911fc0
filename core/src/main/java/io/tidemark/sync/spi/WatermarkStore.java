package io.tidemark.sync.spi;

import io.tidemark.sync.internal.store.InMemoryWatermarkStore;

import java.time.Instant;
import java.util.Map;
import java.util.Optional;
import java.util.OptionalLong;

/**
 * Keeps each tracked object's watermark and bookkeeping. Writes of the version are compare-and-set: a store
 * never lets a version go down and never overwrites a version another writer stored in between.
 *
 * <p>{@link #inMemory()} is for tests and throw-away runs; {@link io.tidemark.sync.JdbcWatermarkStore} keeps
 * state in the database.
 */
public interface WatermarkStore {

    /** A store that lives as long as the JVM. */
    static WatermarkStore inMemory() {
        return new InMemoryWatermarkStore();
    }

    Optional<WatermarkState> load(String objectName);

    /** Every object the store knows, by name. */
    Map<String, WatermarkState> loadAll();

    /**
     * Stores {@code newVersion} if the stored version is still {@code expected} (empty meaning "none stored"),
     * records the poll time and clears the last error.
     *
     * @throws io.tidemark.sync.TidemarkException {@code WATERMARK_REGRESSION} when {@code newVersion} is lower
     *         than the stored version, {@code WATERMARK_CONFLICT} when the stored version is no longer
     *         {@code expected}; nothing is written in either case
     */
    void advance(String objectName, OptionalLong expected, long newVersion, Instant at);

    /** Records that a cycle ran without moving the version, with its error (null after a clean cycle). */
    void recordPoll(String objectName, Instant at, String error);

    /** Pauses or resumes the object; the engine skips paused objects. */
    void setPaused(String objectName, boolean paused, Instant at);

    /**
     * Forgets the object's version, so that its next cycle is a first cycle again (and follows its
     * {@link io.tidemark.sync.InitialSync}). The pause flag is kept.
     */
    void reset(String objectName, Instant at);
}
