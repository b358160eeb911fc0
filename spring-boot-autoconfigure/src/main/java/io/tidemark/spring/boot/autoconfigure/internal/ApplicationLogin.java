package io.tidemark.spring.boot.autoconfigure.internal;

import org.springframework.beans.factory.BeanFactory;
import org.springframework.boot.jdbc.autoconfigure.DataSourceProperties;
import org.springframework.util.ClassUtils;

/**
 * The application's {@code spring.datasource.url}, {@code .username} and {@code .password}, from its
 * {@link DataSourceProperties} bean: the defaults of the log-based capture's replication connection, which needs a
 * URL and credentials, not a DataSource. spring-boot-jdbc is optional, so its class is touched only once it is
 * known to be there.
 */
public final class ApplicationLogin {

    private static final String DATA_SOURCE_PROPERTIES =
            "org.springframework.boot.jdbc.autoconfigure.DataSourceProperties";

    private ApplicationLogin() {
    }

    /** {@link JdbcLogin#NONE} without spring-boot-jdbc or without a single DataSourceProperties bean. */
    public static JdbcLogin of(BeanFactory beans, ClassLoader loader) {
        return ClassUtils.isPresent(DATA_SOURCE_PROPERTIES, loader) ? Jdbc.login(beans) : JdbcLogin.NONE;
    }

    private static final class Jdbc {
        static JdbcLogin login(BeanFactory beans) {
            // The raw values, not determineUrl() and the like: those invent an embedded database's defaults, or
            // throw when there is none, where "not set" is the answer wanted here.
            DataSourceProperties properties = beans.getBeanProvider(DataSourceProperties.class).getIfUnique();
            return properties == null ? JdbcLogin.NONE
                    : new JdbcLogin(properties.getUrl(), properties.getUsername(), properties.getPassword());
        }
    }
}
