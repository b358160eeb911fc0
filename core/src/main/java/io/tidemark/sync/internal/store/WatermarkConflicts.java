package io.tidemark.sync.internal.store;

import io.tidemark.sync.ErrorCode;
import io.tidemark.sync.TidemarkException;
import io.tidemark.sync.spi.PositionAdvance;
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

    /** Fails before writing when a destination's new position is lower than its expected one. */
    public static void checkPositionNotBackwards(String objectName, PositionAdvance advance) {
        if (advance.expected().isPresent() && advance.version() < advance.expected().getAsLong()) {
            throw TidemarkException.forObject(ErrorCode.WATERMARK_REGRESSION, objectName,
                    "refusing to move the position of destination '" + advance.destination() + "' back from "
                            + advance.expected().getAsLong() + " to " + advance.version()
                            + "; positions must only increase. " + regressionAdvice(objectName));
        }
    }

    /** A destination's position was no longer the one a cycle started from. */
    public static TidemarkException positionConflict(String objectName, PositionAdvance advance, OptionalLong held) {
        return TidemarkException.forObject(ErrorCode.WATERMARK_CONFLICT, objectName,
                "the position of destination '" + advance.destination() + "' changed under this cycle: expected "
                        + describe(advance.expected()) + " but the store holds " + describe(held) + ". Another"
                        + " engine is probably polling the same object; nothing was stored and the next cycle"
                        + " starts from the stored positions.");
    }

    public static TidemarkException regression(String objectName, long stored, long newVersion) {
        return TidemarkException.forObject(ErrorCode.WATERMARK_REGRESSION, objectName,
                "refusing to move the watermark back from " + stored + " to " + newVersion
                        + "; versions must only increase. " + regressionAdvice(objectName));
    }

    /**
     * What to do about a version below the stored watermark, safe to follow: the two likely causes and, for each,
     * the way out that loses nothing. A reset is advised only where it loses nothing (a FULL object) or with the
     * loss spelled out.
     */
    public static String regressionAdvice(String objectName) {
        return "Nothing was delivered or stored, and the object is retried from the stored watermark. Two likely"
                + " causes: (1) another engine writes this object's watermark in the same store without coordination"
                + " (two deployments, or a second instance, sharing the object name and store): run one engine per"
                + " object and store, or give each engine its own object names or store; nothing is lost, since"
                + " the other engine delivered what it stored. (2) The source database was restored from a backup or"
                + " failed over to a copy whose versions are behind the stored watermark: the changes made there"
                + " since lie below the watermark. Then start the object again without a gap: for an"
                + " InitialSync.FULL object, SyncEngine.reset(\"" + objectName + "\") exports everything again"
                + " (destinations see rows again); for an INCREMENTAL object, switch it to InitialSync.FULL and then"
                + " reset it. Resetting an INCREMENTAL object as it is starts from the current version and skips"
                + " every change made since the restore: do that only if that loss is accepted.";
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
            if (!now.equals(expected)) {
                // Another writer moved it while this cycle ran: the race of two engines, nothing is lost.
                return TidemarkException.forObject(ErrorCode.WATERMARK_REGRESSION, objectName,
                        "refusing to store " + newVersion + ": while this cycle ran from " + describe(expected)
                                + ", another writer stored " + now.getAsLong() + ". Another engine is polling this"
                                + " object in the same store without coordination. Nothing was stored and nothing is"
                                + " lost: the other engine delivered up to " + now.getAsLong() + ", and the next"
                                + " cycle continues from there (destinations may see some changes twice). Run one"
                                + " engine per object and store, or give each engine its own object names or store."
                                + " Do not reset the object for this.");
            }
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
