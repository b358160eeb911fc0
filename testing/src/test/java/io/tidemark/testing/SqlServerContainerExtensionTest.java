package io.tidemark.testing;

import org.junit.jupiter.api.Nested;
import org.junit.jupiter.api.Test;

import javax.sql.DataSource;
import java.sql.Connection;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/** The SQL Server fixture itself, on a real SQL Server 2022; skipped where there is no Docker. */
@SqlServerContainerTest
class SqlServerContainerExtensionTest {

    private final SqlServerDatabase database;

    SqlServerContainerExtensionTest(SqlServerDatabase database) {
        this.database = database;
    }

    @Test
    void hands_out_a_fresh_database_on_sql_server_2022_or_later(DataSource dataSource) throws SQLException {
        assertThat(query(dataSource, "SELECT DB_NAME()")).isEqualTo(database.name());
        int major = Integer.parseInt(query(dataSource, "SELECT CAST(SERVERPROPERTY('ProductMajorVersion') AS INT)"));
        assertThat(major).isGreaterThanOrEqualTo(16);
        assertThat(query(dataSource, "SELECT COUNT(*) FROM sys.tables")).isEqualTo("0");
    }

    @Test
    void the_same_database_is_given_to_every_parameter_of_the_class(DataSource dataSource, SqlServerDatabase again) {
        assertThat(again).isSameAs(database);
        assertThat(again.dataSource()).isSameAs(dataSource);
    }

    @Test
    void a_created_login_connects_without_rights() throws SQLException {
        DataSource app = database.createLogin("fixture_app_login");
        assertThat(query(app, "SELECT USER_NAME()")).isEqualTo("fixture_app_login");
        assertThat(query(app, "SELECT IS_SRVROLEMEMBER('sysadmin')")).isEqualTo("0");
        assertThat(query(app, "SELECT IS_ROLEMEMBER('db_owner')")).isEqualTo("0");
        database.execute("CREATE TABLE dbo.secret (id INT PRIMARY KEY)");
        assertThatThrownBy(() -> query(app, "SELECT COUNT(*) FROM dbo.secret"))
                .isInstanceOf(SQLException.class)
                .hasMessageContaining("SELECT permission was denied");
    }

    @Test
    void another_database_of_the_same_server_is_isolated() throws SQLException {
        database.execute("CREATE TABLE dbo.only_here (id INT)");
        try (SqlServerDatabase other = SqlServerContainerServer.shared().createDatabase()) {
            assertThat(other.name()).isNotEqualTo(database.name());
            assertThat(query(other.dataSource(), "SELECT CASE WHEN OBJECT_ID('dbo.only_here') IS NULL THEN 'gone'"
                    + " ELSE 'there' END")).isEqualTo("gone");
        }
    }

    @Test
    void a_dropped_database_is_gone() {
        SqlServerDatabase temporary = SqlServerContainerServer.shared().createDatabase();
        temporary.close();
        assertThatThrownBy(() -> query(temporary.dataSource(), "SELECT 1"))
                .isInstanceOf(SQLException.class)
                .hasMessageContaining(temporary.name());
    }

    @Nested
    class NestedClass {
        @Test
        void shares_the_outer_class_database(SqlServerDatabase nested) {
            assertThat(nested).isSameAs(database);
        }
    }

    static String query(DataSource dataSource, String sql) throws SQLException {
        try (Connection c = dataSource.getConnection(); Statement s = c.createStatement(); ResultSet rs = s.executeQuery(sql)) {
            rs.next();
            return rs.getString(1);
        }
    }
}
