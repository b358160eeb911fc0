package io.tidemark.sync.internal.engine;

import io.tidemark.sync.DeliveryPolicy;
import io.tidemark.sync.ErrorCode;
import io.tidemark.sync.TidemarkException;
import io.tidemark.sync.TrackedObject;
import io.tidemark.sync.internal.config.Checks;

import java.util.List;
import java.util.Map;

/**
 * What a change to a running engine must satisfy: the same rules {@code build()} applies to the same kind of
 * configuration (each object's fields and procedure name, each destination's name, policy and start, unique names,
 * a dead-letter store for a dead-lettering policy), plus what only a change can break (adding a name that exists,
 * changing or removing one that does not, removing the last destination). Every violation is reported at once, in
 * one {@code INVALID_CONFIGURATION} error naming the object or destination.
 */
final class ReconfigurationRules {

    private ReconfigurationRules() {
    }

    /** An object to track, or (with {@code replacing}) the new configuration of a tracked one of the same name. */
    static void checkObject(EngineConfig config, Map<String, TrackedObject> tracked, TrackedObject object,
                            boolean replacing) {
        String what = replacing ? "SyncEngine.update" : "SyncEngine.track";
        if (object == null) {
            Checks.of(what).add("the tracked object is null").throwIfAny();
        }
        if (replacing && object.name() != null && !tracked.containsKey(object.name())) {
            throw unknownObject(config, tracked, object.name());
        }
        Checks checks = Checks.of(what);
        if (TrackedObjectRules.check(checks, object)) {
            checks.valid(() -> config.provider().validate(object));
        }
        checks.that(replacing || !tracked.containsKey(object.name()), "The engine already tracks an object named '"
                + object.name() + "'; change it with update(...), or untrack(...) it first");
        checks.throwIfAny();
    }

    /** A destination to add, or (with {@code replacing}) the new destination and policy of an existing one. */
    static void checkDestination(EngineConfig config, NamedDestination destination, boolean replacing) {
        String what = replacing ? "SyncEngine.replaceDestination" : "SyncEngine.addDestination";
        boolean known = config.destinations().stream().anyMatch(d -> d.name().equals(destination.name()));
        if (replacing && destination.name() != null && !known) {
            throw unknownDestination(config, destination.name());
        }
        Checks checks = Checks.of(what);
        destination.check(checks);
        checks.that(replacing || !known, "The engine already delivers to a destination named '" + destination.name()
                + "'; change it with replaceDestination(...), or remove it first");
        boolean deadLetters = destination.policy() != null
                && destination.policy().whenExhausted() == DeliveryPolicy.WhenExhausted.DEAD_LETTER;
        checks.that(!deadLetters || config.deadLetters() != null, "Destination '" + destination.name()
                + "' dead-letters refused pages, but the engine has no dead-letter store: build it with"
                + " builder.deadLetters(...)");
        checks.throwIfAny();
    }

    /** A destination to remove: it must exist, and must not be the last one (objects would deliver nowhere). */
    static void checkRemoval(EngineConfig config, String name) {
        List<NamedDestination> current = config.destinations();
        if (current.stream().noneMatch(d -> d.name().equals(name))) {
            throw unknownDestination(config, name);
        }
        Checks.of("SyncEngine.removeDestination").that(current.size() > 1, "Destination '" + name + "' is the"
                + " engine's last one, and objects would deliver nowhere; add the new destination first, or use"
                + " replaceDestination(...)").throwIfAny();
    }

    static TidemarkException unknownObject(EngineConfig config, Map<String, TrackedObject> tracked, String name) {
        return new TidemarkException(ErrorCode.UNKNOWN_OBJECT, "The engine '" + config.name()
                + "' does not track an object named '" + name + "'; it tracks " + tracked.keySet());
    }

    static TidemarkException unknownDestination(EngineConfig config, String name) {
        return new TidemarkException(ErrorCode.UNKNOWN_DESTINATION, "The engine '" + config.name()
                + "' does not deliver to a destination named '" + name + "'; it delivers to "
                + config.destinations().stream().map(NamedDestination::name).toList());
    }
}
