package io.tidemark.sync.spi;

import java.util.OptionalInt;

/**
 * The single JSON argument a change procedure receives:
 * {@code {"fromVersion":N,"mode":"sync"|"seed"}}, plus {@code "maxRows":M} when the object sets a hint.
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
    private final String json;

    private ChangeRequest(long fromVersion, Mode mode, Integer maxRows) {
        this.fromVersion = fromVersion;
        this.mode = mode;
        this.maxRows = maxRows;
        // Numbers and two fixed words only: nothing to escape, so the text is built directly.
        StringBuilder sb = new StringBuilder(64)
                .append("{\"fromVersion\":").append(fromVersion)
                .append(",\"mode\":\"").append(mode.wire()).append('"');
        if (maxRows != null) {
            sb.append(",\"maxRows\":").append(maxRows);
        }
        this.json = sb.append('}').toString();
    }

    public static ChangeRequest sync(long fromVersion) {
        return new ChangeRequest(fromVersion, Mode.SYNC, null);
    }

    public static ChangeRequest sync(long fromVersion, OptionalInt maxRows) {
        return new ChangeRequest(fromVersion, Mode.SYNC, maxRows.isPresent() ? maxRows.getAsInt() : null);
    }

    public static ChangeRequest seed() {
        return new ChangeRequest(0L, Mode.SEED, null);
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

    /** The request as the JSON text bound to the procedure's parameter. */
    public String toJson() {
        return json;
    }

    @Override
    public String toString() {
        return json;
    }
}
