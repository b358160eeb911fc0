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

    /** Refuses a missing source identity: every stored version records what produced it. */
    public static void requireSource(String objectName, String source) {
        if (source == null || source.isBlank()) {
            throw TidemarkException.forObject(ErrorCode.INVALID_CONFIGURATION, objectName,
                    "a watermark must be stored with the identity of the procedure that produced it, got "
                            + (source == null ? "null" : "a blank one")
                            + "; the provider's sourceIdentity(object) must return a non-blank text");
        }
    }

    /**
     * The stored version was produced by {@code stored}, but the object now calls {@code current}: the cycle
     * must neither call the new procedure from the old position nor move the watermark.
     */
    public static TidemarkException sourceChanged(String objectName, OptionalLong version, String stored,
                                                  String current) {
        return TidemarkException.forObject(ErrorCode.WATERMARK_SOURCE_CHANGED, objectName,
                "the stored watermark " + describe(version) + " was produced by " + stored
                        + ", but the object now calls " + current + "; nothing was called or delivered and the"
                        + " watermark is unchanged. If " + current + " continues the same versions, adopt the"
                        + " stored position with SyncEngine.adoptWatermark(\"" + objectName + "\"); to start"
                        + " the object again with a first cycle, reset it with SyncEngine.reset(\""
                        + objectName + "\").");
    }

    /** Explains why a compare-and-set found something other than {@code expected} and {@code source}. */
    public static TidemarkException explain(String objectName, String source, OptionalLong expected,
                                            long newVersion, Optional<WatermarkState> current) {
        OptionalLong now = current.map(WatermarkState::version).orElse(OptionalLong.empty());
        if (now.isPresent() && newVersion < now.getAsLong()) {
            return regression(objectName, now.getAsLong(), newVersion);
        }
        Optional<String> storedSource = current.flatMap(WatermarkState::source);
        if (now.isPresent() && storedSource.isPresent() && !storedSource.get().equals(source)) {
            return sourceChanged(objectName, now, storedSource.get(), source);
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
