package io.tidemark.sync;

import java.util.Optional;

/**
 * What a replay of dead letters did.
 *
 * @param delivered        letters the destination accepted (they are deleted)
 * @param refused          letters the destination refused (0 or 1: a replay stops at the first refusal); the
 *                         attempt is recorded on the letter
 * @param claimedElsewhere true when letters were left alone because another replay holds them
 * @param error            what the destination said when it refused
 */
public record ReplayResult(int delivered, int refused, boolean claimedElsewhere, Optional<String> error) {

    public ReplayResult {
        if (delivered < 0 || refused < 0) {
            throw new IllegalArgumentException("counts must not be negative");
        }
        error = error == null ? Optional.empty() : error;
    }

    /** Nothing was there to replay. */
    public static ReplayResult nothing() {
        return new ReplayResult(0, 0, false, Optional.empty());
    }
}
