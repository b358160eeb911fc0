package io.tidemark.cli.internal;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/** Migration file names and versions; durations as an operator writes them. */
class MigrationFilesTest {

    @Test
    void the_next_flyway_version_follows_the_highest_first_part() {
        assertThat(MigrationFiles.nextVersion(List.of())).isEqualTo("1");
        assertThat(MigrationFiles.nextVersion(List.of("V1__a.sql", "V9_2__b.sql", "V10__c.sql", "R__repeatable.sql",
                "V11__not_sql.txt", "notes.txt"))).isEqualTo("11");
        assertThat(MigrationFiles.nextVersion(List.of("V2.5.1__x.sql"))).isEqualTo("3");
    }

    @Test
    void a_flyway_file_is_named_and_never_overwritten(@TempDir Path dir) throws IOException {
        Path file = MigrationFiles.flyway(dir, null, "tidemark_history_public.\"Order\"", "SELECT 1;\n",
                MigrationFiles.Dialect.POSTGRES);

        assertThat(file.getFileName().toString()).isEqualTo("V1__tidemark_history_public_order.sql");
        assertThat(Files.readString(file)).isEqualTo("SELECT 1;\n");
        assertThat(dir.resolve("V1__tidemark_history_public_order.sql.conf")).doesNotExist();
        assertThatThrownBy(() -> MigrationFiles.flyway(dir, "01", "other", "", MigrationFiles.Dialect.POSTGRES))
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("Flyway version 01 is taken by");
    }

    @Test
    void a_liquibase_changeset_needs_an_id_and_author_without_spaces(@TempDir Path dir) {
        assertThatThrownBy(() -> MigrationFiles.liquibase(dir, "x", null, "the dba", "", MigrationFiles.Dialect.POSTGRES))
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("author 'the dba'");
    }

    @Test
    void durations_short_and_iso() {
        DurationConverter converter = new DurationConverter();
        assertThat(converter.convert("90s")).isEqualTo(Duration.ofSeconds(90));
        assertThat(converter.convert("30m")).isEqualTo(Duration.ofMinutes(30));
        assertThat(converter.convert("12h")).isEqualTo(Duration.ofHours(12));
        assertThat(converter.convert("7d")).isEqualTo(Duration.ofDays(7));
        assertThat(converter.convert("P1DT2H")).isEqualTo(Duration.ofHours(26));
        assertThatThrownBy(() -> converter.convert("a week")).hasMessageContaining("'a week' is not a duration");
    }
}
