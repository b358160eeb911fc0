package io.tidemark.sync.spi;

import java.util.OptionalInt;

/**
 * The single JSON argument a change procedure receives:
 * {@code {"fromVersion":N,"mode":"sync"|"seed"}}, plus {@code "maxRows":M} when the object sets a hint, plus
 * {@code "initial":true} on the very first cycle of an {@link io.tidemark.sync.InitialSync#FULL} object.
 *
 * <p>{@code initial} resolves what {@code fromVersion: 0} alone cannot: "nothing was ever exported, send
 * everything" versus "the stored watermark is 0, send what changed after it". A procedure that ignores the field
 * keeps working as the contract always allowed; Tidemark's generated procedures use it, so that an object whose
 * stored watermark is 0 is never re-exported whole at every cycle.
 */
public final class ChangeRequest {

    /** Why the procedure is called. */
    public enum Mode {
        /** Return the changes after {@code fromVersion}. */
        SYNC("sync"),
        /** Report the current version and return no rows (first cycle of an incremental object). */
        SEED("seed");

        private final String wire;

        Mode(String wire) {
            this.wire = wire;
        }

        /** The value sent in {@code "mode"}. */
        public String wire() {
            return wire;
        }
    }

    private final long fromVersion;
    private final Mode mode;
    private final Integer maxRows;
    private final boolean initial;
    private final String json;

    private ChangeRequest(long fromVersion, Mode mode, Integer maxRows, boolean initial) {
        this.fromVersion = fromVersion;
        this.mode = mode;
        this.maxRows = maxRows;
        this.initial = initial;
        // Numbers and two fixed words only: nothing to escape, so the text is built directly.
        StringBuilder sb = new StringBuilder(64)
                .append("{\"fromVersion\":").append(fromVersion)
                .append(",\"mode\":\"").append(mode.wire()).append('"');
        if (initial) {
            sb.append(",\"initial\":true");
        }
        if (maxRows != null) {
            sb.append(",\"maxRows\":").append(maxRows);
        }
        this.json = sb.append('}').toString();
    }

    public static ChangeRequest sync(long fromVersion) {
        return new ChangeRequest(fromVersion, Mode.SYNC, null, false);
    }

    public static ChangeRequest sync(long fromVersion, OptionalInt maxRows) {
        return new ChangeRequest(fromVersion, Mode.SYNC, boxed(maxRows), false);
    }

    /** The first cycle of a FULL object: {@code {"fromVersion":0,"mode":"sync","initial":true}}. */
    public static ChangeRequest initialFull(OptionalInt maxRows) {
        return new ChangeRequest(0L, Mode.SYNC, boxed(maxRows), true);
    }

    public static ChangeRequest seed() {
        return new ChangeRequest(0L, Mode.SEED, null, false);
    }

    private static Integer boxed(OptionalInt value) {
        return value.isPresent() ? value.getAsInt() : null;
    }

    public long fromVersion() {
        return fromVersion;
    }

    public Mode mode() {
        return mode;
    }

    public OptionalInt maxRows() {
        return maxRows == null ? OptionalInt.empty() : OptionalInt.of(maxRows);
    }

    /** True on the first cycle of a FULL object, when nothing was ever exported. */
    public boolean initial() {
        return initial;
    }

    /** The request as the JSON text bound to the procedure's parameter. */
    public String toJson() {
        return json;
    }

    @Override
    public String toString() {
        return json;
    }
}
