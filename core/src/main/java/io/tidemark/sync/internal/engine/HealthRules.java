package io.tidemark.sync.internal.engine;

import io.tidemark.sync.DestinationStatus;
import io.tidemark.sync.EngineHealth;
import io.tidemark.sync.HealthPolicy;
import io.tidemark.sync.ObjectStatus;

import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.function.Function;

/**
 * The health rules, in one place so the README's "Monitoring" section can state them exactly. Each finding is
 * one reason naming its object or destination.
 * <ol>
 *   <li>DOWN when the engine is closed.</li>
 *   <li>An object is <em>failing</em> when its last cycle failed or was blocked, and it has failed
 *       {@link HealthPolicy#failingCycles()} cycles in a row or for {@link HealthPolicy#failingFor()} (one failed
 *       cycle, retried successfully, is not a finding). Each failing object is a finding.</li>
 *   <li>A paused object is a finding.</li>
 *   <li>A destination reported blocked by its object's last cycle, while the object itself delivered to others, is
 *       a finding (its policy already ran out of attempts within the cycle).</li>
 *   <li>A destination with at least {@link HealthPolicy#deadLetters()} pages dead-lettered for one object within
 *       {@link HealthPolicy#deadLetterWindow()} (counted by this engine) is a finding.</li>
 *   <li>DOWN when at least one object is failing and every object that is not paused is failing: nothing can make
 *       progress. DEGRADED when there is any finding. UP otherwise: objects that have not run yet, an object that
 *       failed fewer times than the thresholds, and an engine tracking no object at all are up.</li>
 * </ol>
 */
final class HealthRules {

    private HealthRules() {
    }

    /**
     * @param deadLetters per object name: pages dead-lettered per destination within the policy's window
     */
    static EngineHealth judge(boolean closed, String engineName, List<ObjectStatus> statuses, HealthPolicy policy,
                              Instant now, Function<String, Map<String, Integer>> deadLetters) {
        if (closed) {
            return new EngineHealth(EngineHealth.Status.DOWN, List.of("engine '" + engineName + "' is closed"));
        }
        List<String> reasons = new ArrayList<>();
        int failing = 0;
        int active = 0;
        for (ObjectStatus status : statuses) {
            String name = status.object().name();
            if (status.paused()) {
                reasons.add("object '" + name + "' is paused");
            } else {
                active++;
            }
            if (isFailing(status, policy, now)) {
                failing++;
                reasons.add(describeFailing(status, now));
            }
            boolean objectBlocked = status.state() == ObjectStatus.State.BLOCKED;
            for (DestinationStatus destination : status.destinations()) {
                if (destination.blocked() && !objectBlocked) {
                    reasons.add("destination '" + destination.destination() + "' of object '" + name
                            + "' is blocked" + destination.lastError().map(e -> ": " + e).orElse(""));
                }
            }
            deadLetters.apply(name).forEach((destination, count) -> {
                if (count >= policy.deadLetters()) {
                    reasons.add("destination '" + destination + "' of object '" + name + "' dead-lettered " + count
                            + (count == 1 ? " page" : " pages") + " within " + policy.deadLetterWindow());
                }
            });
        }
        if (failing > 0 && failing >= active) {
            return new EngineHealth(EngineHealth.Status.DOWN, reasons);
        }
        return reasons.isEmpty() ? EngineHealth.up() : new EngineHealth(EngineHealth.Status.DEGRADED, reasons);
    }

    static boolean isFailing(ObjectStatus status, HealthPolicy policy, Instant now) {
        ObjectStatus.State state = status.state();
        if (state != ObjectStatus.State.FAILING && state != ObjectStatus.State.BLOCKED) {
            return false;
        }
        if (status.consecutiveFailures() >= policy.failingCycles()) {
            return true;
        }
        return status.failingSince().map(since -> Duration.between(since, now).compareTo(policy.failingFor()) >= 0)
                .orElse(false);
    }

    private static String describeFailing(ObjectStatus status, Instant now) {
        String what = status.state() == ObjectStatus.State.BLOCKED ? "blocked" : "failing";
        String since = status.failingSince().map(s -> " for " + FailureLog.human(Duration.between(s, now)))
                .orElse("");
        int cycles = status.consecutiveFailures();
        return "object '" + status.object().name() + "' is " + what + " (" + cycles
                + (cycles == 1 ? " cycle" : " cycles") + " in a row" + since + ")" + status.lastReport().flatMap(r -> r.error())
                .map(e -> ": " + e.getMessage()).orElse("");
    }
}
