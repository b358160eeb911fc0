package io.tidemark.sync.internal.config;

import io.tidemark.sync.ErrorCode;
import io.tidemark.sync.TidemarkException;
import io.tidemark.sync.internal.sql.PgName;
import org.junit.jupiter.api.Test;

import java.time.Duration;
import java.util.Arrays;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatCode;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

class ChecksTest {

    @Test
    void nothing_wrong_throws_nothing() {
        Checks checks = Checks.of("Thing");
        checks.notNull("a", 1);
        checks.positive("b", Duration.ofSeconds(1));
        checks.commandTimeout("c", Defaults.COMMAND_TIMEOUT);
        assertThat(checks.valid(() -> PgName.checkPart("ok", "table"))).isEqualTo("ok");
        assertThat(checks.violations()).isEmpty();
        assertThatCode(checks::throwIfAny).doesNotThrowAnyException();
    }

    @Test
    void one_violation_is_one_line_naming_the_builder() {
        Checks checks = Checks.of("Thing");
        checks.atLeast("size", 0, 1);
        assertThatThrownBy(checks::throwIfAny)
                .isInstanceOf(TidemarkException.class)
                .hasMessage("Thing: size must be at least 1, got 0")
                .satisfies(e -> assertThat(((TidemarkException) e).code()).isEqualTo(ErrorCode.INVALID_CONFIGURATION));
    }

    @Test
    void every_violation_is_listed_including_those_of_throwing_checks() {
        Checks checks = Checks.of("Thing");
        checks.notNull("clock", null);
        checks.noNulls("columns", Arrays.asList("a", null));
        checks.notBlank("name", " ");
        checks.notNegative("wait", Duration.ofSeconds(-1));
        checks.commandTimeout("timeout", Duration.ofMillis(500));
        checks.commandTimeout("huge", Duration.ofSeconds(Integer.MAX_VALUE + 1L));
        assertThat(checks.valid(() -> PgName.checkPart("x".repeat(64), "table"))).isNull();

        assertThat(checks.violations()).hasSize(7);
        assertThatThrownBy(checks::throwIfAny)
                .hasMessageStartingWith("Thing has 7 configuration problems:\n  - clock must not be null\n")
                .hasMessageContaining("\n  - columns must not contain null")
                .hasMessageContaining("\n  - name must not be blank, got ' '")
                .hasMessageContaining("\n  - wait must be zero or positive, got PT-1S")
                .hasMessageContaining("\n  - timeout must be at least one second")
                .hasMessageContaining("\n  - huge must be at least one second and at most 2147483647 seconds")
                .hasMessageContaining("63");
    }
}
