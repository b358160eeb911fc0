package io.tidemark.spring.boot.autoconfigure;

import io.micrometer.core.instrument.MeterRegistry;
import io.tidemark.spring.boot.autoconfigure.internal.ApplicationLogin;
import io.tidemark.spring.boot.autoconfigure.internal.AssembledEngine;
import io.tidemark.spring.boot.autoconfigure.internal.EngineAssembler;
import io.tidemark.spring.boot.autoconfigure.spi.SyncEngineCustomizer;
import io.tidemark.sync.SyncEngine;
import io.tidemark.sync.micrometer.MicrometerSyncListener;
import io.tidemark.sync.spi.Destination;
import io.tidemark.sync.spi.SyncListener;
import org.springframework.beans.factory.config.ConfigurableListableBeanFactory;
import org.springframework.beans.factory.ObjectProvider;
import org.springframework.boot.autoconfigure.AutoConfiguration;
import org.springframework.boot.autoconfigure.condition.ConditionalOnBean;
import org.springframework.boot.autoconfigure.condition.ConditionalOnBooleanProperty;
import org.springframework.boot.autoconfigure.condition.ConditionalOnClass;
import org.springframework.boot.autoconfigure.condition.ConditionalOnMissingBean;
import org.springframework.boot.autoconfigure.condition.ConditionalOnSingleCandidate;
import org.springframework.boot.context.properties.EnableConfigurationProperties;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import org.springframework.util.ClassUtils;

import javax.sql.DataSource;

/**
 * A {@link SyncEngine} from the {@code tidemark.*} properties over the application's {@link DataSource}, started and
 * stopped with the context ({@link TidemarkEngineLifecycle}). Backs off entirely when the application defines a
 * {@code SyncEngine} of its own, when {@code tidemark.enabled} is false, and when there is no single DataSource.
 *
 * <p>Destinations: {@code tidemark.destinations.<name>} (made from properties, or the Destination bean of that
 * name) and every other Destination bean under its bean name. Listeners: every {@link SyncListener} bean, and a
 * {@link MicrometerSyncListener} on the application's {@link MeterRegistry} when there is one.
 */
@AutoConfiguration(afterName = {
        "org.springframework.boot.jdbc.autoconfigure.DataSourceAutoConfiguration",
        "org.springframework.boot.micrometer.metrics.autoconfigure.CompositeMeterRegistryAutoConfiguration",
        "org.springframework.boot.micrometer.metrics.autoconfigure.export.simple.SimpleMetricsExportAutoConfiguration"})
@ConditionalOnClass(SyncEngine.class)
@ConditionalOnBooleanProperty(name = "tidemark.enabled", matchIfMissing = true)
@ConditionalOnSingleCandidate(DataSource.class)
@ConditionalOnMissingBean(SyncEngine.class)
@EnableConfigurationProperties(TidemarkProperties.class)
public class TidemarkAutoConfiguration {

    /**
     * The engine with its provider, closed together: the engine does not close a provider (one may be shared), and
     * the log-based one holds a replication connection until it is closed. Destroyed after the engine bean, which
     * depends on it.
     */
    @Bean(destroyMethod = "close")
    AssembledEngine tidemarkAssembledEngine(TidemarkProperties properties, DataSource dataSource,
                                            ConfigurableListableBeanFactory beans,
                                            ObjectProvider<SyncListener> listeners,
                                            ObjectProvider<SyncEngineCustomizer> customizers) {
        ClassLoader loader = beans.getBeanClassLoader();
        EngineAssembler assembler = new EngineAssembler(properties, dataSource,
                beans.getBeansOfType(Destination.class),
                name -> beans.containsBean(name) && beans.isTypeMatch(name, DataSource.class)
                        ? beans.getBean(name, DataSource.class) : null,
                className -> ClassUtils.isPresent(className, loader), ApplicationLogin.of(beans, loader));
        return assembler.assemble(listeners.orderedStream().toList(), customizers.orderedStream().toList());
    }

    @Bean(destroyMethod = "close")
    SyncEngine tidemarkSyncEngine(AssembledEngine tidemarkAssembledEngine) {
        return tidemarkAssembledEngine.engine();
    }

    @Bean
    TidemarkEngineLifecycle tidemarkEngineLifecycle(SyncEngine tidemarkSyncEngine, TidemarkProperties properties) {
        return new TidemarkEngineLifecycle(tidemarkSyncEngine, properties.isAutoStartup());
    }

    /** The engine's meters (tidemark.cycles, tidemark.changes, ...) on the application's registry. */
    @Configuration(proxyBeanMethods = false)
    @ConditionalOnClass(MeterRegistry.class)
    @ConditionalOnBean(MeterRegistry.class)
    static class Metrics {

        @Bean
        @ConditionalOnMissingBean
        MicrometerSyncListener tidemarkMicrometerSyncListener(MeterRegistry registry) {
            return MicrometerSyncListener.create(registry);
        }
    }
}
