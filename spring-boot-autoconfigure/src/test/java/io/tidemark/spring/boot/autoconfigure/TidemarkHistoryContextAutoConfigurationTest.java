package io.tidemark.spring.boot.autoconfigure;

import io.tidemark.history.ChangeContext;
import io.tidemark.spring.boot.autoconfigure.internal.PostgresContextDataSource;
import io.tidemark.testing.EmbeddedPostgresServer;
import io.tidemark.testing.TestDatabase;
import org.junit.jupiter.api.Test;
import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.test.context.FilteredClassLoader;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;
import org.springframework.boot.test.context.runner.WebApplicationContextRunner;
import org.springframework.boot.web.servlet.FilterRegistrationBean;
import org.springframework.jdbc.datasource.SimpleDriverDataSource;
import org.springframework.mock.web.MockFilterChain;
import org.springframework.mock.web.MockHttpServletRequest;
import org.springframework.mock.web.MockHttpServletResponse;

import javax.sql.DataSource;
import java.lang.reflect.Proxy;
import java.sql.Connection;
import java.sql.DatabaseMetaData;
import java.sql.ResultSet;
import java.sql.Statement;
import java.util.concurrent.atomic.AtomicReference;

import static org.assertj.core.api.Assertions.assertThat;

/** The change context of web requests: its conditions, the DataSource wrapping, and the filter. */
class TidemarkHistoryContextAutoConfigurationTest {

    private final WebApplicationContextRunner web = new WebApplicationContextRunner()
            .withConfiguration(AutoConfigurations.of(TidemarkHistoryContextAutoConfiguration.class))
            .withBean(DataSource.class, SimpleDriverDataSource::new);

    @Test
    void a_servlet_application_with_history_gets_the_filter_and_a_contextual_data_source() {
        web.run(context -> {
            assertThat(context).hasNotFailed().hasSingleBean(FilterRegistrationBean.class);
            assertThat(context.getBean(FilterRegistrationBean.class).getFilter()).isInstanceOf(ChangeContextFilter.class);
            assertThat(context.getBean(FilterRegistrationBean.class).getOrder()).isZero();
            DataSource dataSource = context.getBean(DataSource.class);
            assertThat(dataSource).isInstanceOf(PostgresContextDataSource.class);
            assertThat(dataSource.unwrap(SimpleDriverDataSource.class)).isNotNull();
        });
    }

    @Test
    void postgresql_connections_carry_the_context_and_other_databases_get_theirs_untouched() throws Exception {
        TestDatabase postgres = EmbeddedPostgresServer.shared().createDatabase();
        try {
            ChangeContext alice = ChangeContext.changedBy("alice");
            DataSource contextual = new PostgresContextDataSource(postgres.dataSource(), () -> alice, "tidemark");
            try (Connection c = contextual.getConnection(); Statement st = c.createStatement()) {
                st.execute("CREATE TABLE t (v text)");
                c.setAutoCommit(false);
                st.execute("INSERT INTO t VALUES (current_setting('tidemark.changed_by', true))");
                c.commit();
                try (ResultSet rs = st.executeQuery("SELECT v FROM t")) {
                    assertThat(rs.next()).isTrue();
                    assertThat(rs.getString(1)).as("the write carried the context").isEqualTo("alice");
                }
            }

            // Another database: its connections are handed out as the pool gives them, never with PostgreSQL's
            // set_config in front of their statements.
            Connection sqlServer = connectionOf("Microsoft SQL Server");
            DataSource other = new PostgresContextDataSource(dataSourceOf(sqlServer), () -> alice, "tidemark");
            assertThat(other.getConnection()).isSameAs(sqlServer);
            assertThat(other.getConnection()).as("decided once, then remembered").isSameAs(sqlServer);
        } finally {
            postgres.close();
        }
    }

    /** A connection whose metadata names the given database; every other call is refused. */
    private static Connection connectionOf(String product) {
        DatabaseMetaData metaData = (DatabaseMetaData) Proxy.newProxyInstance(
                DatabaseMetaData.class.getClassLoader(), new Class<?>[] {DatabaseMetaData.class},
                (proxy, method, args) -> {
                    if (method.getName().equals("getDatabaseProductName")) {
                        return product;
                    }
                    throw new UnsupportedOperationException(method.getName());
                });
        return (Connection) Proxy.newProxyInstance(Connection.class.getClassLoader(),
                new Class<?>[] {Connection.class}, (proxy, method, args) -> {
                    if (method.getName().equals("getMetaData")) {
                        return metaData;
                    }
                    throw new UnsupportedOperationException(method.getName());
                });
    }

    private static DataSource dataSourceOf(Connection connection) {
        return new SimpleDriverDataSource() {
            @Override
            public Connection getConnection() {
                return connection;
            }
        };
    }

    @Test
    void the_data_source_stays_unwrapped_when_told_so() {
        web.withPropertyValues("tidemark.history.context.wrap-data-source=false").run(context -> {
            assertThat(context).hasSingleBean(FilterRegistrationBean.class);
            assertThat(context.getBean(DataSource.class)).isInstanceOf(SimpleDriverDataSource.class);
        });
    }

    @Test
    void absent_outside_a_web_application_without_history_or_when_disabled() {
        new ApplicationContextRunner()
                .withConfiguration(AutoConfigurations.of(TidemarkHistoryContextAutoConfiguration.class))
                .withBean(DataSource.class, SimpleDriverDataSource::new)
                .run(context -> {
                    assertThat(context).hasNotFailed().doesNotHaveBean(FilterRegistrationBean.class);
                    assertThat(context.getBean(DataSource.class)).isInstanceOf(SimpleDriverDataSource.class);
                });
        web.withClassLoader(new FilteredClassLoader(ChangeContext.class))
                .run(context -> assertThat(context).hasNotFailed().doesNotHaveBean(FilterRegistrationBean.class));
        web.withPropertyValues("tidemark.history.context.enabled=false").run(context -> {
            assertThat(context).hasNotFailed().doesNotHaveBean(FilterRegistrationBean.class);
            assertThat(context.getBean(DataSource.class)).isInstanceOf(SimpleDriverDataSource.class);
        });
    }

    @Test
    void the_filter_binds_the_principal_and_the_headers_for_the_request_only() throws Exception {
        ChangeContextFilter filter = new ChangeContextFilter("X-Why", "X-Trace");
        MockHttpServletRequest request = new MockHttpServletRequest("PUT", "/items/A-100");
        request.setUserPrincipal(() -> "alice");
        request.addHeader("X-Why", "price list 2026");
        request.addHeader("X-Trace", "trace-17");
        AtomicReference<ChangeContext> seen = new AtomicReference<>();

        filter.doFilter(request, new MockHttpServletResponse(), new MockFilterChain() {
            @Override
            public void doFilter(jakarta.servlet.ServletRequest req, jakarta.servlet.ServletResponse res) {
                seen.set(ChangeContext.current());
            }
        });

        assertThat(seen.get().changedBy()).hasValue("alice");
        assertThat(seen.get().reason()).hasValue("price list 2026");
        assertThat(seen.get().correlationId()).hasValue("trace-17");
        assertThat(ChangeContext.current()).isEqualTo(ChangeContext.EMPTY);
    }

    @Test
    void an_anonymous_request_without_headers_binds_nothing() throws Exception {
        AtomicReference<ChangeContext> seen = new AtomicReference<>();
        new ChangeContextFilter("X-Change-Reason", "X-Request-Id").doFilter(new MockHttpServletRequest(),
                new MockHttpServletResponse(), new MockFilterChain() {
                    @Override
                    public void doFilter(jakarta.servlet.ServletRequest req, jakarta.servlet.ServletResponse res) {
                        seen.set(ChangeContext.current());
                    }
                });
        assertThat(seen.get()).isEqualTo(ChangeContext.EMPTY);
    }
}
