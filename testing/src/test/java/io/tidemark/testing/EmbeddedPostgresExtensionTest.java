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

@EmbeddedPostgresTest
class EmbeddedPostgresExtensionTest {

    private final TestDatabase database;

    EmbeddedPostgresExtensionTest(TestDatabase database) {
        this.database = database;
    }

    @Test
    void hands_out_a_working_database_on_the_server_of_this_run(DataSource dataSource) throws SQLException {
        assertThat(query(dataSource, "SELECT current_database()")).isEqualTo(database.name());
        int major = Integer.parseInt(query(dataSource, "SELECT current_setting('server_version_num')")) / 10_000;
        // The build passes the major of its pg* profile; without one the pinned binaries are PostgreSQL 18.
        assertThat(major).isEqualTo(Integer.getInteger(EmbeddedPostgresServer.EXPECTED_MAJOR_PROPERTY, 18));
        assertThat(EmbeddedPostgresServer.shared().serverVersion()).startsWith(major + ".");
    }

    @Test
    void the_same_database_is_given_to_every_parameter_of_the_class(DataSource dataSource, TestDatabase again) {
        assertThat(again).isSameAs(database);
        assertThat(again.dataSource()).isSameAs(dataSource);
    }

    @Test
    void a_created_role_connects_without_superuser_rights() throws SQLException {
        DataSource app = database.createRole("fixture_app_role");
        assertThat(query(app, "SELECT current_user")).isEqualTo("fixture_app_role");
        assertThat(query(app, "SELECT rolsuper::text FROM pg_roles WHERE rolname = current_user")).isEqualTo("false");
    }

    @Test
    void another_database_of_the_same_server_is_isolated() throws SQLException {
        database.execute("CREATE TABLE only_here (id int)");
        try (TestDatabase other = EmbeddedPostgresServer.shared().createDatabase()) {
            assertThat(other.name()).isNotEqualTo(database.name());
            assertThat(query(other.dataSource(), "SELECT to_regclass('only_here') IS NULL")).isEqualTo("t");
        }
    }

    @Test
    void a_dropped_database_is_gone() {
        TestDatabase temporary = EmbeddedPostgresServer.shared().createDatabase();
        temporary.close();
        assertThatThrownBy(() -> query(temporary.dataSource(), "SELECT 1"))
                .isInstanceOf(SQLException.class)
                .hasMessageContaining(temporary.name());
    }

    @Nested
    class NestedClass {
        @Test
        void shares_the_outer_class_database(TestDatabase nested) {
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
