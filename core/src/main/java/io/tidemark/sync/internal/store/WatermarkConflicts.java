package io.tidemark.sync.internal.store;

import io.tidemark.sync.ErrorCode;
import io.tidemark.sync.TidemarkException;
import io.tidemark.sync.spi.WatermarkState;

import java.util.Optional;
import java.util.OptionalLong;

/** The errors every watermark store raises when a compare-and-set does not apply. */
public final class WatermarkConflicts {

    private WatermarkConflicts() {
    }

    /** Fails before writing when the new version is lower than the expected one. */
    public static void checkNotBackwards(String objectName, OptionalLong expected, long newVersion) {
        if (expected.isPresent() && newVersion < expected.getAsLong()) {
            throw regression(objectName, expected.getAsLong(), newVersion);
        }
    }

    public static TidemarkException regression(String objectName, long stored, long newVersion) {
        return TidemarkException.forObject(ErrorCode.WATERMARK_REGRESSION, objectName,
                "refusing to move the watermark back from " + stored + " to " + newVersion
                        + "; versions must only increase. If the source was restored or re-created, reset the"
                        + " object's watermark (SyncEngine.reset) to start it again.");
    }

    /** Explains why a compare-and-set found something other than {@code expected}. */
    public static TidemarkException explain(String objectName, OptionalLong expected, long newVersion,
                                            Optional<WatermarkState> current) {
        OptionalLong now = current.map(WatermarkState::version).orElse(OptionalLong.empty());
        if (now.isPresent() && newVersion < now.getAsLong()) {
            return regression(objectName, now.getAsLong(), newVersion);
        }
        return TidemarkException.forObject(ErrorCode.WATERMARK_CONFLICT, objectName,
                "the watermark changed under this cycle: expected " + describe(expected) + " but the store holds "
                        + describe(now) + ". Another engine is probably polling the same object; nothing was"
                        + " stored and the next cycle starts from the stored version.");
    }

    private static String describe(OptionalLong version) {
        return version.isPresent() ? Long.toString(version.getAsLong()) : "no version";
    }
}
