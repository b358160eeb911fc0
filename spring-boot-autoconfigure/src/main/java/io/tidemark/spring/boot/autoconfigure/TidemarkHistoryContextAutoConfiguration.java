package io.tidemark.spring.boot.autoconfigure;

import io.tidemark.history.ChangeContext;
import org.springframework.boot.autoconfigure.AutoConfiguration;
import org.springframework.boot.autoconfigure.condition.ConditionalOnBooleanProperty;
import org.springframework.boot.autoconfigure.condition.ConditionalOnClass;
import org.springframework.boot.autoconfigure.condition.ConditionalOnWebApplication;
import org.springframework.boot.context.properties.EnableConfigurationProperties;
import org.springframework.boot.context.properties.bind.Binder;
import org.springframework.boot.web.servlet.FilterRegistrationBean;
import org.springframework.context.annotation.Bean;
import org.springframework.core.env.Environment;
import org.springframework.web.filter.OncePerRequestFilter;

/**
 * History's change context from each web request: {@link ChangeContextFilter} binds who and why for the request,
 * {@link ContextualDataSourcePostProcessor} makes the DataSource send them with the statements. Applies to a servlet
 * web application with tidemark-history on the class path; off with {@code tidemark.history.context.enabled=false}
 * (and the DataSource left unwrapped with {@code tidemark.history.context.wrap-data-source=false}). Independent of
 * the engine: history works without sync.
 */
@AutoConfiguration
@ConditionalOnClass({ChangeContext.class, OncePerRequestFilter.class, FilterRegistrationBean.class})
@ConditionalOnWebApplication(type = ConditionalOnWebApplication.Type.SERVLET)
@ConditionalOnBooleanProperty(name = "tidemark.history.context.enabled", matchIfMissing = true)
@EnableConfigurationProperties(TidemarkProperties.class)
public class TidemarkHistoryContextAutoConfiguration {

    @Bean
    FilterRegistrationBean<ChangeContextFilter> tidemarkChangeContextFilter(TidemarkProperties properties) {
        TidemarkProperties.Context context = properties.getHistory().getContext();
        FilterRegistrationBean<ChangeContextFilter> registration = new FilterRegistrationBean<>(
                new ChangeContextFilter(context.getReasonHeader(), context.getCorrelationIdHeader()));
        registration.setOrder(context.getFilterOrder());
        return registration;
    }

    /**
     * Static, as a BeanPostProcessor must be; it reads its one property from the environment directly because it is
     * created before the properties are bound.
     */
    @Bean
    @ConditionalOnBooleanProperty(name = "tidemark.history.context.wrap-data-source", matchIfMissing = true)
    static ContextualDataSourcePostProcessor tidemarkContextualDataSourcePostProcessor(Environment environment) {
        return new ContextualDataSourcePostProcessor(Binder.get(environment)
                .bind("tidemark.history.context.settings-prefix", String.class).orElse("tidemark"));
    }
}
