package io.tidemark.sync;

import java.time.Instant;
import java.util.List;
import java.util.Objects;
import java.util.Optional;

/**
 * Everything {@link SyncEngine#snapshot()} knows at one moment, for a host's health or status endpoint: immutable,
 * built from one read of the watermark store, so the objects, their destinations and the verdict agree.
 *
 * @param engineName the engine's {@link SyncEngine.Builder#name(String) name}
 * @param takenAt    when it was taken, on the engine's clock
 * @param objects    one status per tracked object, in the order they were tracked
 * @param health     the verdict of the health rules on these statuses
 */
public record EngineStatus(String engineName, Instant takenAt, List<ObjectStatus> objects, EngineHealth health) {

    public EngineStatus {
        Objects.requireNonNull(engineName, "engineName");
        Objects.requireNonNull(takenAt, "takenAt");
        Objects.requireNonNull(health, "health");
        objects = List.copyOf(objects);
    }

    /** The status of the named object, if the engine tracked it when the snapshot was taken. */
    public Optional<ObjectStatus> object(String objectName) {
        return objects.stream().filter(o -> o.object().name().equals(objectName)).findFirst();
    }
}
