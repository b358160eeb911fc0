package io.tidemark.spring.boot.autoconfigure;

import io.tidemark.sync.SyncEngine;
import org.springframework.boot.autoconfigure.AutoConfiguration;
import org.springframework.boot.autoconfigure.condition.ConditionalOnClass;
import org.springframework.boot.autoconfigure.condition.ConditionalOnMissingBean;
import org.springframework.boot.autoconfigure.condition.ConditionalOnSingleCandidate;
import org.springframework.boot.health.autoconfigure.contributor.ConditionalOnEnabledHealthIndicator;
import org.springframework.boot.health.contributor.HealthIndicator;
import org.springframework.context.annotation.Bean;

/**
 * The health component {@code tidemark} ({@link TidemarkHealthIndicator}) when Spring Boot's health support is on
 * the class path, for the application's single {@link SyncEngine}: the auto-configured one or one of its own. Off
 * with {@code management.health.tidemark.enabled=false}.
 */
@AutoConfiguration(after = TidemarkAutoConfiguration.class)
@ConditionalOnClass({HealthIndicator.class, SyncEngine.class})
@ConditionalOnSingleCandidate(SyncEngine.class)
@ConditionalOnEnabledHealthIndicator("tidemark")
public class TidemarkHealthAutoConfiguration {

    @Bean
    @ConditionalOnMissingBean(name = "tidemarkHealthIndicator")
    TidemarkHealthIndicator tidemarkHealthIndicator(SyncEngine engine) {
        return new TidemarkHealthIndicator(engine);
    }
}
