package io.tidemark.destinations.webhook.internal;

import org.junit.jupiter.api.Test;

import java.time.Duration;
import java.time.Instant;

import static org.assertj.core.api.Assertions.assertThat;

class WebhookRetryAfterTest {

    private static final Instant NOW = Instant.parse("2026-12-01T10:00:00Z");

    @Test
    void seconds_dates_and_what_is_not_understood() {
        assertThat(RetryAfter.parse("120", NOW)).contains(Duration.ofSeconds(120));
        assertThat(RetryAfter.parse(" 0 ", NOW)).contains(Duration.ZERO);
        assertThat(RetryAfter.parse("Tue, 01 Dec 2026 10:01:30 GMT", NOW)).contains(Duration.ofSeconds(90));
        assertThat(RetryAfter.parse("Tue, 01 Dec 2026 09:00:00 GMT", NOW)).contains(Duration.ZERO);
        assertThat(RetryAfter.parse("-5", NOW)).isEmpty();
        assertThat(RetryAfter.parse("soon", NOW)).isEmpty();
        assertThat(RetryAfter.parse("99999999999999999999999", NOW)).isEmpty();
        assertThat(RetryAfter.parse("", NOW)).isEmpty();
        assertThat(RetryAfter.parse(null, NOW)).isEmpty();
    }
}
