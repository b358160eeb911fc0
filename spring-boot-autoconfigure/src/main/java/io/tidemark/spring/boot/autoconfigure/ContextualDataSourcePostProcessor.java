package io.tidemark.spring.boot.autoconfigure;

import io.tidemark.history.ChangeContext;
import io.tidemark.history.ContextualDataSource;
import io.tidemark.spring.boot.autoconfigure.internal.PostgresContextDataSource;
import org.springframework.beans.factory.config.BeanPostProcessor;

import javax.sql.DataSource;
import java.util.Objects;

/**
 * Wraps every {@link DataSource} bean so that its PostgreSQL connections are {@link ContextualDataSource}
 * connections: they send the current {@link ChangeContext} (bound per request by {@link ChangeContextFilter}) in front
 * of the statements that write, with no extra round trip and nothing at all when the context is empty. Connections
 * to any other database (a SQL Server DataSource of the same application) are handed out untouched. {@code unwrap}
 * still reaches the pool.
 */
public final class ContextualDataSourcePostProcessor implements BeanPostProcessor {

    private final String settingsPrefix;

    public ContextualDataSourcePostProcessor(String settingsPrefix) {
        this.settingsPrefix = Objects.requireNonNull(settingsPrefix, "settingsPrefix");
    }

    @Override
    public Object postProcessAfterInitialization(Object bean, String beanName) {
        if (bean instanceof DataSource dataSource && !(bean instanceof ContextualDataSource)
                && !(bean instanceof PostgresContextDataSource)) {
            return new PostgresContextDataSource(dataSource, ChangeContext::current, settingsPrefix);
        }
        return bean;
    }
}
