package io.tidemark.spring.boot.autoconfigure.internal;

import org.springframework.beans.factory.BeanFactory;
import org.springframework.boot.jdbc.autoconfigure.DataSourceProperties;
import org.springframework.boot.jdbc.autoconfigure.JdbcConnectionDetails;
import org.springframework.util.ClassUtils;

/**
 * The application's own database login: the defaults of the log-based capture's replication connection, which needs a
 * URL and credentials, not a DataSource. First {@code spring.datasource.url}, {@code .username} and
 * {@code .password} as set ({@link DataSourceProperties}); for what they leave unset, a service connection's
 * {@link JdbcConnectionDetails} (Testcontainers, Docker Compose), as Flyway's and Liquibase's auto-configurations take
 * theirs. spring-boot-jdbc is optional, so its classes are touched only once they are known to be there.
 */
public final class ApplicationLogin {

    private static final String DATA_SOURCE_PROPERTIES =
            "org.springframework.boot.jdbc.autoconfigure.DataSourceProperties";
    /** Boot's adapter of spring.datasource.* to JdbcConnectionDetails: the properties themselves, read above. */
    private static final String PROPERTIES_DETAILS =
            "org.springframework.boot.jdbc.autoconfigure.PropertiesJdbcConnectionDetails";

    private ApplicationLogin() {
    }

    /** {@link JdbcLogin#NONE} without spring-boot-jdbc, or without the beans that tell. */
    public static JdbcLogin of(BeanFactory beans, ClassLoader loader) {
        return ClassUtils.isPresent(DATA_SOURCE_PROPERTIES, loader) ? Jdbc.login(beans) : JdbcLogin.NONE;
    }

    private static final class Jdbc {
        static JdbcLogin login(BeanFactory beans) {
            // The raw values, not determineUrl() and the like: those invent an embedded database's defaults, or
            // throw when there is none, where "not set" is the answer wanted here.
            DataSourceProperties properties = beans.getBeanProvider(DataSourceProperties.class).getIfUnique();
            JdbcLogin set = properties == null ? JdbcLogin.NONE
                    : new JdbcLogin(properties.getUrl(), properties.getUsername(), properties.getPassword());
            JdbcConnectionDetails details = beans.getBeanProvider(JdbcConnectionDetails.class).getIfUnique();
            if (details == null || details.getClass().getName().equals(PROPERTIES_DETAILS)) {
                return set;
            }
            return set.orElse(new JdbcLogin(details.getJdbcUrl(), details.getUsername(), details.getPassword()));
        }
    }
}
