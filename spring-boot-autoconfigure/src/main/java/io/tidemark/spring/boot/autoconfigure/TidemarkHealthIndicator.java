package io.tidemark.spring.boot.autoconfigure;

import io.tidemark.sync.EngineHealth;
import io.tidemark.sync.SyncEngine;
import org.springframework.boot.health.contributor.Health;
import org.springframework.boot.health.contributor.HealthIndicator;
import org.springframework.boot.health.contributor.Status;

import java.util.Objects;

/**
 * The engine's {@link SyncEngine#health()} as an Actuator health component ({@code tidemark}): UP, {@link #DEGRADED}
 * with the reasons, DOWN with the reasons. The reasons are the detail {@code reasons}, one line each naming the
 * object or destination.
 *
 * <p>DEGRADED is a status of its own: the engine runs but an object or destination is failing, blocked or paused.
 * Spring Boot's default aggregation does not know it, so an application that wants it in the overall status orders
 * it, e.g. {@code management.endpoint.health.status.order: DOWN, OUT_OF_SERVICE, DEGRADED, UP, UNKNOWN} (its HTTP
 * status is 200 unless {@code management.endpoint.health.status.http-mapping.DEGRADED} says otherwise).
 */
public final class TidemarkHealthIndicator implements HealthIndicator {

    /** The engine runs, but some object or destination is failing, blocked or paused. */
    public static final Status DEGRADED = new Status("DEGRADED",
            "The engine runs, but some object or destination is failing, blocked or paused");

    private final SyncEngine engine;

    public TidemarkHealthIndicator(SyncEngine engine) {
        this.engine = Objects.requireNonNull(engine, "engine");
    }

    @Override
    public Health health() {
        EngineHealth health = engine.health();
        Health.Builder builder = switch (health.status()) {
            case UP -> Health.up();
            case DEGRADED -> Health.status(DEGRADED);
            case DOWN -> Health.down();
        };
        if (!health.reasons().isEmpty()) {
            builder.withDetail("reasons", health.reasons());
        }
        return builder.build();
    }
}
