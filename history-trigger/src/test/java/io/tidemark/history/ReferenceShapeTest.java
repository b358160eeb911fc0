package io.tidemark.history;

import io.tidemark.testing.EmbeddedPostgresTest;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

import javax.sql.DataSource;
import java.io.IOException;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import java.util.List;

import static org.assertj.core.api.Assertions.assertThat;

/** The reference shape the fix tests and the benchmark compare against is the listing, to the character. */
@EmbeddedPostgresTest
@ExtendWith(InvariantsAfterEach.class)
class ReferenceShapeTest {

    static final ReferenceShape POLICIES = ReferenceShape.of("policies", "id", List.of("id", "number", "premium", "status"));

    @Test
    void reproduces_the_listing_of_the_reference_document() throws IOException {
        assertThat(POLICIES.functionAndTrigger().strip()).isEqualTo(listing());
    }

    @Test
    void the_listing_installs_and_records_history(DataSource ds) {
        Db.exec(ds, "CREATE TABLE policies (id bigint PRIMARY KEY, number text, premium numeric(12,2), status text)");
        POLICIES.install(ds, List.of("bigint", "text", "numeric(12,2)", "text"));
        Db.exec(ds, "INSERT INTO policies VALUES (1, 'P-1', 10, 'active'); UPDATE policies SET premium = 11");
        assertThat(Db.count(ds, "SELECT count(*) FROM policies_history")).isEqualTo(2);
    }

    static String listing() throws IOException {
        try (InputStream in = ReferenceShapeTest.class.getResourceAsStream("/reference/policies-reference-shape.sql")) {
            String text = new String(in.readAllBytes(), StandardCharsets.UTF_8);
            return text.substring(text.indexOf("CREATE OR REPLACE FUNCTION")).strip();
        }
    }
}
