package io.tidemark.sync.internal.engine;

import io.tidemark.sync.ErrorCode;
import io.tidemark.sync.TidemarkException;
import io.tidemark.sync.TrackedObject;
import io.tidemark.sync.internal.contract.ResponseSummary;
import io.tidemark.sync.spi.ChangeRequest;

import java.util.Optional;
import java.util.OptionalLong;

/**
 * The version rules of one call of an object's procedure, shared by the engine's {@link CycleRunner} and the Kafka
 * Connect source connector (which keeps its positions in Connect's offsets instead of a watermark store):
 * whether a stored position may be continued at all, which request to send from a position, and the version a
 * scanned response moves the position to.
 */
public final class CallRules {

    private CallRules() {
    }

    /**
     * Whether the stored position was produced by another procedure than the one the object calls now: continuing
     * would ask the new procedure for changes after someone else's position, so the caller must fail before calling.
     * A position stored without an identity (written before identities were recorded) is not a change.
     */
    public static boolean sourceChanged(OptionalLong stored, Optional<String> storedSource, String current) {
        return stored.isPresent() && storedSource.isPresent() && !storedSource.get().equals(current);
    }

    /**
     * The request for an object at {@code position}: without one, the first export ({@code "initial":true}); with
     * one, the changes after it. A stored 0 is a position like any other.
     */
    public static ChangeRequest request(TrackedObject object, OptionalLong position) {
        return position.isEmpty()
                ? ChangeRequest.initialFull(object.maxRows())
                : ChangeRequest.sync(position.getAsLong(), object.maxRows());
    }

    /**
     * The version a response moves the position to (its highest {@code $version}, else
     * {@code Metadata.Sync.Version}); refuses with {@code WATERMARK_REGRESSION} one that would move it back.
     *
     * @param positionName what the caller calls its position in the message ("watermark", "position")
     * @param advice       what the user can do about it, in the caller's terms
     */
    public static long versionToStore(String objectName, OptionalLong position, ResponseSummary summary,
                                      String positionName, String advice) {
        long next = summary.versionToStore();
        if (position.isPresent() && next < position.getAsLong()) {
            throw TidemarkException.forObject(ErrorCode.WATERMARK_REGRESSION, objectName,
                    "the response would move the " + positionName + " back from " + position.getAsLong() + " to "
                            + next + " (highest $version " + describe(summary.highestRowVersion())
                            + ", Metadata.Sync.Version " + summary.metadataVersion() + "); refusing it. A"
                            + " procedure whose versions can go down must be fixed (docs/contract.md, what a"
                            + " version has to be). " + advice);
        }
        return next;
    }

    private static String describe(OptionalLong v) {
        return v.isPresent() ? Long.toString(v.getAsLong()) : "none";
    }
}
