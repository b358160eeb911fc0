package io.tidemark.spring.boot.autoconfigure.internal;

import io.tidemark.sync.ErrorCode;
import io.tidemark.sync.TidemarkException;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;

/**
 * Collects every problem of the {@code tidemark.*} properties, each naming its property, so that start-up fails
 * once with all of them rather than with the first.
 */
final class Violations {

    private final List<String> problems = new ArrayList<>();

    void add(String property, String problem) {
        problems.add(property + ": " + problem);
    }

    void require(boolean ok, String property, String problem) {
        if (!ok) {
            add(property, problem);
        }
    }

    void positive(String property, Duration duration) {
        require(duration != null && !duration.isNegative() && !duration.isZero(), property,
                "must be a positive duration such as 500ms, 30s or 5m (was " + duration + ")");
    }

    void throwIfAny() {
        if (!problems.isEmpty()) {
            throw new TidemarkException(ErrorCode.INVALID_CONFIGURATION,
                    "Invalid Tidemark configuration (" + problems.size() + " problem"
                            + (problems.size() == 1 ? "" : "s") + "):\n  - " + String.join("\n  - ", problems));
        }
    }
}
