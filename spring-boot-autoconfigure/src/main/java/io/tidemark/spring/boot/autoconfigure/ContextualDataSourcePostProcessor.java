package io.tidemark.spring.boot.autoconfigure;

import io.tidemark.history.ChangeContext;
import io.tidemark.history.ContextualDataSource;
import org.springframework.beans.factory.config.BeanPostProcessor;

import javax.sql.DataSource;
import java.util.Objects;

/**
 * Wraps every {@link DataSource} bean in a {@link ContextualDataSource}, so that its connections send the current
 * {@link ChangeContext} (bound per request by {@link ChangeContextFilter}) in front of the statements that write:
 * no extra round trip, and nothing at all when the context is empty. {@code unwrap} still reaches the pool.
 */
public final class ContextualDataSourcePostProcessor implements BeanPostProcessor {

    private final String settingsPrefix;

    public ContextualDataSourcePostProcessor(String settingsPrefix) {
        this.settingsPrefix = Objects.requireNonNull(settingsPrefix, "settingsPrefix");
    }

    @Override
    public Object postProcessAfterInitialization(Object bean, String beanName) {
        if (bean instanceof DataSource dataSource && !(bean instanceof ContextualDataSource)) {
            return ContextualDataSource.wrap(dataSource, ChangeContext::current, settingsPrefix);
        }
        return bean;
    }
}
