package io.tidemark.spring.boot.autoconfigure;

import io.tidemark.sync.InMemoryWatermarkStore;
import io.tidemark.sync.SyncEngine;
import io.tidemark.sync.TrackedObject;
import org.junit.jupiter.api.Test;
import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.health.contributor.Health;
import org.springframework.boot.health.contributor.HealthIndicator;
import org.springframework.boot.health.contributor.Status;
import org.springframework.boot.test.context.FilteredClassLoader;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;

import java.util.List;

import static org.assertj.core.api.Assertions.assertThat;

/** The health component's conditions and its mapping of {@code engine.health()}; DEGRADED is in SpringBootApplicationTest. */
class TidemarkHealthAutoConfigurationTest {

    private final ApplicationContextRunner runner = new ApplicationContextRunner()
            .withConfiguration(AutoConfigurations.of(TidemarkHealthAutoConfiguration.class))
            .withBean(SyncEngine.class, TidemarkHealthAutoConfigurationTest::engine);

    private static SyncEngine engine() {
        return SyncEngine.builder().name("health").provider(io.tidemark.postgres.PostgresProvider.create(
                        new org.springframework.jdbc.datasource.SimpleDriverDataSource()))
                .watermarks(InMemoryWatermarkStore.create()).track(TrackedObject.of("items", "public.items_changes"))
                .destination("audit", batch -> { }).build();
    }

    @Test
    void reports_up_for_a_running_engine_and_down_with_the_reason_once_it_is_closed() {
        runner.run(context -> {
            HealthIndicator indicator = context.getBean("tidemarkHealthIndicator", HealthIndicator.class);
            assertThat(indicator.health().getStatus()).isEqualTo(Status.UP);

            context.getBean(SyncEngine.class).close();
            Health down = indicator.health();
            assertThat(down.getStatus()).isEqualTo(Status.DOWN);
            assertThat(down.getDetails()).containsEntry("reasons", List.of("engine 'health' is closed"));
        });
    }

    @Test
    void degraded_is_a_status_of_its_own() {
        assertThat(TidemarkHealthIndicator.DEGRADED.getCode()).isEqualTo("DEGRADED");
        assertThat(TidemarkHealthIndicator.DEGRADED).isNotIn(Status.UP, Status.DOWN, Status.OUT_OF_SERVICE,
                Status.UNKNOWN);
    }

    @Test
    void absent_without_spring_boot_health_when_disabled_or_without_an_engine() {
        runner.withClassLoader(new FilteredClassLoader(HealthIndicator.class))
                .run(context -> assertThat(context).hasNotFailed().doesNotHaveBean(TidemarkHealthIndicator.class));
        runner.withPropertyValues("management.health.tidemark.enabled=false")
                .run(context -> assertThat(context).hasNotFailed().doesNotHaveBean(TidemarkHealthIndicator.class));
        new ApplicationContextRunner().withConfiguration(AutoConfigurations.of(TidemarkHealthAutoConfiguration.class))
                .run(context -> assertThat(context).hasNotFailed().doesNotHaveBean(TidemarkHealthIndicator.class));
    }
}
