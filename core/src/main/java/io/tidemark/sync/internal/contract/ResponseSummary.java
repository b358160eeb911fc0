package io.tidemark.sync.internal.contract;

import io.tidemark.sync.SyncType;

import java.util.OptionalLong;

/** What the checking pass learned about a response, before anything is delivered. */
public final class ResponseSummary {

    private final long metadataVersion;
    private final SyncType syncType;
    private final int reasonCode;
    private final long rowCount;
    private final Long highestRowVersion;
    private final boolean versionsAscending;

    ResponseSummary(long metadataVersion, SyncType syncType, int reasonCode, long rowCount, Long highestRowVersion,
                    boolean versionsAscending) {
        this.versionsAscending = versionsAscending;
        this.metadataVersion = metadataVersion;
        this.syncType = syncType;
        this.reasonCode = reasonCode;
        this.rowCount = rowCount;
        this.highestRowVersion = highestRowVersion;
    }

    /**
     * This response cut after its first {@code rows} rows, whose highest {@code $version} is {@code toVersion}: what
     * an earlier, shorter response of the same call held (a page in flight delivered again after a failover, under
     * the key it had). Only for a {@link #resumableBetweenPages() resumable} response, whose rows up to a version
     * are a prefix.
     */
    public ResponseSummary cutAt(long toVersion, long rows) {
        if (!resumableBetweenPages() || rows > rowCount) {
            throw new IllegalArgumentException("only a resumable response can be cut, and only shorter");
        }
        return new ResponseSummary(metadataVersion, syncType, reasonCode, rows, toVersion, true);
    }

    /** {@code Metadata.Sync.Version}. */
    public long metadataVersion() {
        return metadataVersion;
    }

    public SyncType syncType() {
        return syncType;
    }

    public int reasonCode() {
        return reasonCode;
    }

    /**
     * Whether a destination can stand between two pages of this response: a {@code Diff} whose every row carries
     * a {@code $version}, in ascending order. Then "every change up to version v" is a prefix of the rows, and a
     * position can be stored after each page. A {@code Full} response (replace what you have) is only ever
     * complete.
     */
    public boolean resumableBetweenPages() {
        return versionsAscending && rowCount > 0 && syncType == SyncType.DIFF;
    }

    /** Number of elements in {@code Data}. */
    public long rowCount() {
        return rowCount;
    }

    /** The highest {@code $version} among the rows; empty when no row carries one. */
    public OptionalLong highestRowVersion() {
        return highestRowVersion == null ? OptionalLong.empty() : OptionalLong.of(highestRowVersion);
    }

    /**
     * The version to store once the rows are delivered (rule 3): the highest {@code $version} of the rows, or
     * {@code Metadata.Sync.Version} when no row carries one. Never more than what was actually returned.
     */
    public long versionToStore() {
        return highestRowVersion != null ? highestRowVersion : metadataVersion;
    }
}
