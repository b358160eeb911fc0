package io.tidemark.postgres;

import java.util.List;
import java.util.Objects;
import java.util.Optional;
import java.util.OptionalLong;

/** What {@link PostgresOutbox#trim} did. */
public final class TrimResult {

    private final List<String> readers;
    private final Long lowestWatermark;
    private final Long trimmedThrough;
    private final long deletedChanges;
    private final int batches;
    private final String skippedBecause;

    private TrimResult(List<String> readers, Long lowestWatermark, Long trimmedThrough, long deletedChanges,
                       int batches, String skippedBecause) {
        this.readers = List.copyOf(readers);
        this.lowestWatermark = lowestWatermark;
        this.trimmedThrough = trimmedThrough;
        this.deletedChanges = deletedChanges;
        this.batches = batches;
        this.skippedBecause = skippedBecause;
    }

    static TrimResult skipped(List<String> readers, Long lowestWatermark, String why) {
        return new TrimResult(readers, lowestWatermark, null, 0, 0, Objects.requireNonNull(why));
    }

    static TrimResult trimmed(List<String> readers, long lowestWatermark, long through, long deleted, int batches) {
        return new TrimResult(readers, lowestWatermark, through, deleted, batches, null);
    }

    /** The tracked objects found reading the outbox, whose watermarks bound the trim. */
    public List<String> readers() {
        return readers;
    }

    /** The lowest stored watermark among the readers, when any reader has one. */
    public OptionalLong lowestWatermark() {
        return lowestWatermark == null ? OptionalLong.empty() : OptionalLong.of(lowestWatermark);
    }

    /** The version up to which changes were eligible: the lowest watermark minus the margin. */
    public OptionalLong trimmedThrough() {
        return trimmedThrough == null ? OptionalLong.empty() : OptionalLong.of(trimmedThrough);
    }

    public long deletedChanges() {
        return deletedChanges;
    }

    /** Number of delete transactions run (the last one, deleting nothing, included). */
    public int batches() {
        return batches;
    }

    /** Why nothing was trimmed, when nothing could be. */
    public Optional<String> skippedBecause() {
        return Optional.ofNullable(skippedBecause);
    }

    @Override
    public String toString() {
        return skippedBecause != null
                ? "TrimResult[skipped: " + skippedBecause + ", readers=" + readers + "]"
                : "TrimResult[deleted " + deletedChanges + " changes in " + batches + " batches, through version "
                        + trimmedThrough + ", lowest watermark " + lowestWatermark + ", readers=" + readers + "]";
    }
}
