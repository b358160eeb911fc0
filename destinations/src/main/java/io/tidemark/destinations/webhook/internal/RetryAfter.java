package io.tidemark.destinations.webhook.internal;

import java.time.Duration;
import java.time.Instant;
import java.time.ZonedDateTime;
import java.time.format.DateTimeFormatter;
import java.time.format.DateTimeParseException;
import java.util.Optional;

/**
 * Reads an HTTP {@code Retry-After} value (RFC 9110, 10.2.3): either a number of seconds or an HTTP-date, which
 * is turned into a delay from {@code now} (a date already past means "now").
 */
public final class RetryAfter {

    private RetryAfter() {
    }

    /** The delay the value asks for; empty when there is none or it is malformed (then the policy decides). */
    public static Optional<Duration> parse(String value, Instant now) {
        if (value == null || value.isBlank()) {
            return Optional.empty();
        }
        String v = value.trim();
        if (v.chars().allMatch(Character::isDigit)) {
            try {
                return Optional.of(Duration.ofSeconds(Long.parseLong(v)));
            } catch (NumberFormatException e) {
                return Optional.empty();
            }
        }
        try {
            Instant at = ZonedDateTime.parse(v, DateTimeFormatter.RFC_1123_DATE_TIME).toInstant();
            Duration delay = Duration.between(now, at);
            return Optional.of(delay.isNegative() ? Duration.ZERO : delay);
        } catch (DateTimeParseException e) {
            return Optional.empty();
        }
    }
}
