package io.tidemark.sync;

import java.util.List;
import java.util.Objects;

/**
 * The engine's verdict on itself, for a host's health endpoint: {@link Status#UP}, {@link Status#DEGRADED} with the
 * reasons, or {@link Status#DOWN} with the reasons. The rules are stated in the README, section
 * "Monitoring"; {@link SyncEngine#health()} applies them to {@link SyncEngine#status()}.
 *
 * @param status  the verdict
 * @param reasons one line per finding, each naming the object or destination it is about; empty when up
 */
public record EngineHealth(Status status, List<String> reasons) {

    public enum Status {
        /** No finding: no object failing past the thresholds, paused or blocked, no dead letters piling up. */
        UP,
        /** Some object is failing past the thresholds or paused, or a destination is blocked or piles dead letters. */
        DEGRADED,
        /** The engine is closed, or every object that is not paused is failing: nothing can make progress. */
        DOWN
    }

    public EngineHealth {
        Objects.requireNonNull(status, "status");
        reasons = List.copyOf(reasons);
    }

    public static EngineHealth up() {
        return new EngineHealth(Status.UP, List.of());
    }

    public boolean isUp() {
        return status == Status.UP;
    }
}
