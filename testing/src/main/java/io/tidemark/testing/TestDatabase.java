package io.tidemark.testing;

import io.tidemark.sync.ErrorCode;
import io.tidemark.sync.TidemarkException;
import io.tidemark.sync.internal.sql.PgName;
import io.tidemark.sync.internal.sql.SqlTemplate;

import javax.sql.DataSource;
import java.sql.Connection;
import java.sql.SQLException;
import java.sql.Statement;

/**
 * One database of the embedded server, owned by one test class. Connects as the superuser {@code postgres};
 * {@link #createRole(String)} gives a data source for an ordinary login role, to prove that something works
 * without superuser rights.
 */
public final class TestDatabase extends OwnedDatabase {

    private final EmbeddedPostgresServer server;

    TestDatabase(EmbeddedPostgresServer server, String name) {
        super(name, server.dataSource("postgres", null, name));
        this.server = server;
    }

    /** {@code jdbc:postgresql://localhost:<port>/<name>?user=postgres}. */
    public String jdbcUrl() {
        return server.jdbcUrl(name());
    }

    public int port() {
        return server.port();
    }

    /** Runs SQL (one or more statements) as the superuser. */
    public void execute(String sql) {
        try (Connection c = dataSource().getConnection(); Statement s = c.createStatement()) {
            s.execute(sql);
        } catch (SQLException e) {
            throw new TidemarkException(ErrorCode.DATABASE_ERROR, "Test SQL failed in database " + name() + ": "
                    + e.getMessage() + "\n" + sql, e);
        }
    }

    /**
     * Creates (or re-creates the password of) a login role without superuser rights and returns a data source
     * connecting as it. Roles belong to the server, not the database: use names unique to the test.
     */
    public DataSource createRole(String role) {
        PgName.checkPart(role, "role");
        String password = "pw_" + role;
        execute(SqlTemplate.of("""
                DO $$ BEGIN
                  IF NOT EXISTS (SELECT FROM pg_roles WHERE rolname = {{role_literal}}) THEN
                    CREATE ROLE {{role}} LOGIN NOSUPERUSER NOCREATEDB NOCREATEROLE;
                  END IF;
                END $$;
                ALTER ROLE {{role}} PASSWORD {{password}};
                GRANT CONNECT ON DATABASE {{database}} TO {{role}};""")
                .with("role_literal", PgName.literal(role))
                .with("role", PgName.quote(role))
                .with("password", PgName.literal(password))
                .with("database", PgName.quote(name()))
                .render());
        return dataSourceFor(role, password);
    }

    /** A data source for an existing role. */
    public DataSource dataSourceFor(String role, String password) {
        return server.dataSource(role, password, name());
    }

    /** Drops the database, ending its remaining connections first. */
    @Override
    public void close() {
        try (Connection c = server.adminDataSource().getConnection(); Statement s = c.createStatement()) {
            s.execute(SqlTemplate.of("DROP DATABASE IF EXISTS {{database}} WITH (FORCE)")
                    .with("database", PgName.quote(name())).render());
        } catch (SQLException e) {
            throw new TidemarkException(ErrorCode.DATABASE_ERROR, "Could not drop test database " + name() + ": "
                    + e.getMessage(), e);
        }
    }

    @Override
    public String toString() {
        return "TestDatabase[" + name() + " on port " + server.port() + "]";
    }
}
