package com.example.items;

// tag::test[]
import io.tidemark.sync.Change;
import io.tidemark.testing.EmbeddedPostgresTest;
import org.junit.jupiter.api.Test;

import javax.sql.DataSource;
import java.util.List;

import static org.junit.jupiter.api.Assertions.assertEquals;

@EmbeddedPostgresTest                    // one embedded PostgreSQL 18 per test JVM, a fresh database per test class
class QuickStartTest {

    @Test
    void delivers_the_first_change(DataSource dataSource) throws Exception {
        List<Change> delivered = QuickStart.run(dataSource);

        assertEquals(1, delivered.size());
        assertEquals("A-100", delivered.get(0).field("item_code").orElseThrow().asText());
    }
}
// end::test[]
