package io.tidemark.testing;

import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;

/** The check that keeps a test run meant for one PostgreSQL major from passing on another. */
class ExpectedMajorTest {

    @Test
    void no_expectation_accepts_any_major() {
        assertThat(EmbeddedPostgresServer.majorMismatch(null, 140_024, "14.24")).isNull();
        assertThat(EmbeddedPostgresServer.majorMismatch(" ", 180_006, "18.6")).isNull();
    }

    @Test
    void the_expected_major_is_accepted() {
        assertThat(EmbeddedPostgresServer.majorMismatch("14", 140_024, "14.24")).isNull();
        assertThat(EmbeddedPostgresServer.majorMismatch(" 18 ", 180_006, "18.6")).isNull();
    }

    @Test
    void another_major_is_refused_with_what_was_found_and_what_to_do() {
        assertThat(EmbeddedPostgresServer.majorMismatch("14", 180_006, "18.6"))
                .contains("The embedded PostgreSQL is 18.6, but this run expects major 14")
                .contains(EmbeddedPostgresServer.EXPECTED_MAJOR_PROPERTY)
                .contains("PostgreSQL 14 binaries for this platform");
        // A minor of the expected major is not the major itself.
        assertThat(EmbeddedPostgresServer.majorMismatch("1", 180_006, "18.6")).isNotNull();
    }
}
