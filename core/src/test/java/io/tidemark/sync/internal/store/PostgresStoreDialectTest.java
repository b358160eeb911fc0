package io.tidemark.sync.internal.store;

import org.junit.jupiter.api.Test;

import java.io.IOException;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.Paths;

import static org.assertj.core.api.Assertions.assertThat;

/** The PostgreSQL store SQL against a golden file, pinned when its common statements moved to a shared base. */
class PostgresStoreDialectTest {

    private static final String GOLDEN = "golden/postgres-store.sql";

    @Test
    void generated_sql_matches_the_golden_file() throws IOException {
        String actual = SqlServerStoreDialectTest.render(
                StoreDialect.forProduct("PostgreSQL", "tidemark", "sync_state", "dead_letters"));
        if (Boolean.getBoolean("tidemark.golden.update")) {
            Files.writeString(Paths.get("src/test/resources", GOLDEN), actual, StandardCharsets.UTF_8);
        }
        try (InputStream in = getClass().getClassLoader().getResourceAsStream(GOLDEN)) {
            assertThat(in).isNotNull();
            assertThat(actual).isEqualTo(new String(in.readAllBytes(), StandardCharsets.UTF_8));
        }
    }
}
