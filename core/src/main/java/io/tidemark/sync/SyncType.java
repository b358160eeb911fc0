package io.tidemark.sync;

import java.util.Locale;
import java.util.Optional;

/**
 * {@code Metadata.Sync.Type} of a response: a full re-export of the source, or the differences since the
 * requested version. A consumer that mirrors the source should treat {@link #FULL} as "replace what you have".
 */
public enum SyncType {
    FULL,
    DIFF;

    /** Parses the contract's {@code "Full"} / {@code "Diff"}, ignoring case; empty for anything else. */
    public static Optional<SyncType> fromContract(String value) {
        if (value == null) {
            return Optional.empty();
        }
        switch (value.toLowerCase(Locale.ROOT)) {
            case "full":
                return Optional.of(FULL);
            case "diff":
                return Optional.of(DIFF);
            default:
                return Optional.empty();
        }
    }
}
