package io.tidemark.sync.internal.jdbc;

import io.tidemark.sync.ErrorCode;
import io.tidemark.sync.TidemarkException;
import org.junit.jupiter.api.Test;

import java.time.Duration;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

class CommandTimeoutTest {

    @Test
    void the_default_is_300_seconds() {
        assertThat(CommandTimeout.seconds(CommandTimeout.DEFAULT, "commandTimeout")).isEqualTo(300);
    }

    @Test
    void whole_seconds_up_to_the_jdbc_limit_are_accepted() {
        assertThat(CommandTimeout.seconds(Duration.ofMillis(1500), "t")).isEqualTo(1);
        assertThat(CommandTimeout.seconds(Duration.ofSeconds(Integer.MAX_VALUE), "t")).isEqualTo(Integer.MAX_VALUE);
    }

    @Test
    void null_short_or_too_long_timeouts_are_configuration_errors() {
        for (Duration bad : new Duration[] {null, Duration.ZERO, Duration.ofMillis(999), Duration.ofSeconds(-5)}) {
            assertThatThrownBy(() -> CommandTimeout.seconds(bad, "commandTimeout")).as(String.valueOf(bad))
                    .isInstanceOf(TidemarkException.class)
                    .hasMessageContaining("commandTimeout must be at least one second")
                    .extracting(e -> ((TidemarkException) e).code()).isEqualTo(ErrorCode.INVALID_CONFIGURATION);
        }
        assertThatThrownBy(() -> CommandTimeout.checked(Duration.ofSeconds(Long.MAX_VALUE), "commandTimeout"))
                .isInstanceOf(TidemarkException.class)
                .hasMessageContaining("commandTimeout of PT").hasMessageContaining("is too long")
                .extracting(e -> ((TidemarkException) e).code()).isEqualTo(ErrorCode.INVALID_CONFIGURATION);
    }
}
