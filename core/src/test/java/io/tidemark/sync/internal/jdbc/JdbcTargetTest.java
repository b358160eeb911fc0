package io.tidemark.sync.internal.jdbc;

import org.junit.jupiter.api.Test;

import javax.sql.DataSource;
import java.io.PrintWriter;
import java.sql.Connection;
import java.sql.SQLFeatureNotSupportedException;
import java.util.logging.Logger;

import static org.assertj.core.api.Assertions.assertThat;

class JdbcTargetTest {

    @Test
    void passwords_never_appear_in_a_described_url() {
        assertThat(JdbcTarget.withoutPassword("jdbc:postgresql://db:5432/shop?user=app&password=s3cret&ssl=true"))
                .isEqualTo("jdbc:postgresql://db:5432/shop?user=app&password=***&ssl=true");
        assertThat(JdbcTarget.withoutPassword("jdbc:postgresql://db/shop?PASSWORD=s3cret"))
                .isEqualTo("jdbc:postgresql://db/shop?PASSWORD=***");
        assertThat(JdbcTarget.withoutPassword("jdbc:sqlserver://sql:1433;databaseName=shop;password=s3;cret=1"))
                .isEqualTo("jdbc:sqlserver://sql:1433;databaseName=shop;password=***;cret=1");
        assertThat(JdbcTarget.withoutPassword("jdbc:postgresql://app:s3cret@db:5432/shop"))
                .isEqualTo("jdbc:postgresql://app:***@db:5432/shop");
        assertThat(JdbcTarget.withoutPassword("jdbc:postgresql://db:5432/shop")).isEqualTo("jdbc:postgresql://db:5432/shop");
    }

    @Test
    void a_data_source_is_named_by_its_url_getter_or_else_its_class() {
        assertThat(JdbcTarget.describe(new UrlDataSource("jdbc:postgresql://db/shop?password=x")))
                .isEqualTo("jdbc:postgresql://db/shop?password=***");
        assertThat(JdbcTarget.describe(new NoUrlDataSource()))
                .isEqualTo("the data source " + NoUrlDataSource.class.getName());
        assertThat(JdbcTarget.describe((DataSource) null)).isEqualTo("the data source");
    }

    /** A data source that tells its URL the way PGSimpleDataSource does. */
    public static class UrlDataSource extends NoUrlDataSource {
        private final String url;

        UrlDataSource(String url) {
            this.url = url;
        }

        public String getUrl() {
            return url;
        }
    }

    /** A data source that cannot connect and does not tell where it points. */
    public static class NoUrlDataSource implements DataSource {
        @Override
        public Connection getConnection() {
            throw new UnsupportedOperationException("not used");
        }

        @Override
        public Connection getConnection(String username, String password) {
            throw new UnsupportedOperationException("not used");
        }

        @Override
        public PrintWriter getLogWriter() {
            return null;
        }

        @Override
        public void setLogWriter(PrintWriter out) {
        }

        @Override
        public void setLoginTimeout(int seconds) {
        }

        @Override
        public int getLoginTimeout() {
            return 0;
        }

        @Override
        public Logger getParentLogger() throws SQLFeatureNotSupportedException {
            throw new SQLFeatureNotSupportedException();
        }

        @Override
        public <T> T unwrap(Class<T> iface) {
            return null;
        }

        @Override
        public boolean isWrapperFor(Class<?> iface) {
            return false;
        }
    }
}
