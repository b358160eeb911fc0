package io.tidemark.sync.internal.engine;

import io.tidemark.sync.TrackedObject;
import io.tidemark.sync.internal.config.Checks;

import java.time.Duration;

/**
 * What a {@link TrackedObject} must satisfy, checked when the engine is built (and by the Kafka Connect source
 * connector, which calls the same procedures without an engine).
 */
public final class TrackedObjectRules {

    /** Also the width of the stores' {@code object_name} column. */
    static final int MAX_NAME_LENGTH = 200;

    private TrackedObjectRules() {
    }

    /** Records every problem of the object; returns true when it has none. */
    public static boolean check(Checks checks, TrackedObject object) {
        int before = checks.violations().size();
        String name = object.name();
        if (name == null || name.isBlank()) {
            checks.add("A tracked object needs a non-blank name, got " + (name == null ? "null" : "'" + name + "'"));
        } else if (name.length() > MAX_NAME_LENGTH) {
            checks.add("Tracked object name is longer than " + MAX_NAME_LENGTH + " characters: " + name);
        } else if (name.chars().anyMatch(Character::isISOControl)) {
            checks.add("Tracked object name contains a control character: " + name.replaceAll("\\p{Cntrl}", "?"));
        }
        String prefix = "[" + name + "] ";
        checks.that(object.procedure() != null && !object.procedure().isBlank(),
                prefix + "needs the name of its change procedure or function");
        checks.that(object.initialSync() != null, prefix + "initialSync must not be null");
        Duration interval = object.pollInterval().orElse(null);
        checks.that(interval == null || !(interval.isNegative() || interval.isZero()),
                prefix + "pollInterval must be a positive duration, got " + interval);
        object.maxRows().ifPresent(rows -> checks.atLeast(prefix + "maxRows", rows, 1));
        object.pageSize().ifPresent(size -> checks.atLeast(prefix + "pageSize", size, 1));
        object.table().ifPresent(table -> checks.that(!table.isBlank(), prefix + "table must not be blank"));
        return checks.violations().size() == before;
    }
}
