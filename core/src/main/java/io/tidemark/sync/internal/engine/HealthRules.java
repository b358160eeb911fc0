package io.tidemark.sync.internal.engine;

import io.tidemark.sync.DestinationReport;
import io.tidemark.sync.EngineHealth;
import io.tidemark.sync.ObjectReport;
import io.tidemark.sync.ObjectStatus;
import io.tidemark.sync.Outcome;

import java.util.ArrayList;
import java.util.List;

/**
 * The health rules, in one place so the operations guide can state them exactly:
 * <ul>
 *   <li>DOWN when the engine is closed, or when it tracks objects and the last cycle of every one of them failed
 *       or blocked (nothing can make progress);</li>
 *   <li>DEGRADED when any object's last cycle failed or blocked, any destination of it is blocked, or any object
 *       is paused; one reason per finding;</li>
 *   <li>UP otherwise, including objects that have not run a cycle yet.</li>
 * </ul>
 */
final class HealthRules {

    private HealthRules() {
    }

    static EngineHealth judge(boolean closed, String engineName, List<ObjectStatus> statuses) {
        if (closed) {
            return new EngineHealth(EngineHealth.Status.DOWN, List.of("engine '" + engineName + "' is closed"));
        }
        List<String> reasons = new ArrayList<>();
        int stuck = 0;
        for (ObjectStatus status : statuses) {
            String name = status.object().name();
            if (status.paused()) {
                reasons.add("object '" + name + "' is paused");
            }
            ObjectReport last = status.lastReport().orElse(null);
            if (last == null) {
                continue;
            }
            if (last.outcome() == Outcome.FAILED || last.outcome() == Outcome.BLOCKED) {
                stuck++;
                reasons.add("object '" + name + "' " + last.outcome().name().toLowerCase(java.util.Locale.ROOT)
                        + last.error().map(e -> ": " + e.getMessage()).orElse(""));
            }
            for (DestinationReport destination : last.destinations()) {
                if (destination.outcome() == Outcome.BLOCKED && last.outcome() != Outcome.BLOCKED) {
                    reasons.add("destination '" + destination.destination() + "' of object '" + name
                            + "' is blocked" + destination.error().map(e -> ": " + e.getMessage()).orElse(""));
                }
            }
        }
        if (!statuses.isEmpty() && stuck == statuses.size()) {
            return new EngineHealth(EngineHealth.Status.DOWN, reasons);
        }
        return reasons.isEmpty() ? EngineHealth.up() : new EngineHealth(EngineHealth.Status.DEGRADED, reasons);
    }
}
