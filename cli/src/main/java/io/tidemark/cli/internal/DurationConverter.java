package io.tidemark.cli.internal;

import picocli.CommandLine.ITypeConverter;
import picocli.CommandLine.TypeConversionException;

import java.time.Duration;
import java.time.format.DateTimeParseException;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/** A duration as {@code 90s}, {@code 30m}, {@code 12h}, {@code 7d} or ISO-8601 ({@code P7D}, {@code PT12H}). */
final class DurationConverter implements ITypeConverter<Duration> {

    private static final Pattern SHORT = Pattern.compile("(\\d+)([smhd])");

    @Override
    public Duration convert(String value) {
        Matcher m = SHORT.matcher(value);
        if (m.matches()) {
            long n = Long.parseLong(m.group(1));
            return switch (m.group(2)) {
                case "s" -> Duration.ofSeconds(n);
                case "m" -> Duration.ofMinutes(n);
                case "h" -> Duration.ofHours(n);
                default -> Duration.ofDays(n);
            };
        }
        try {
            return Duration.parse(value);
        } catch (DateTimeParseException e) {
            throw new TypeConversionException("'" + value + "' is not a duration: write 90s, 30m, 12h, 7d or P7D");
        }
    }
}
