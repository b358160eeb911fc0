package io.tidemark.sync;

import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Objects;

/**
 * Something a provider noticed about a tracked object that an operator should know, such as a transaction
 * that holds changes back, or a watermark older than the server still keeps. Carried in
 * {@link ObjectReport#diagnostics()}, {@link ObjectStatus#diagnostics()} and logged.
 */
public final class Diagnostic {

    /** How urgent it is. */
    public enum Severity { INFO, WARNING, ERROR }

    private final Severity severity;
    private final String code;
    private final String message;
    private final Map<String, String> details;

    public Diagnostic(Severity severity, String code, String message, Map<String, String> details) {
        this.severity = Objects.requireNonNull(severity, "severity");
        this.code = Objects.requireNonNull(code, "code");
        this.message = Objects.requireNonNull(message, "message");
        this.details = Map.copyOf(details == null ? Map.of() : details);
    }

    public static Diagnostic warning(String code, String message) {
        return new Diagnostic(Severity.WARNING, code, message, Map.of());
    }

    public Severity severity() {
        return severity;
    }

    /** A stable short name, such as {@code HORIZON_HELD_BACK}. */
    public String code() {
        return code;
    }

    public String message() {
        return message;
    }

    /** Structured facts behind the message (pid, ages, versions), for dashboards. */
    public Map<String, String> details() {
        return details;
    }

    @Override
    public boolean equals(Object o) {
        if (this == o) {
            return true;
        }
        if (!(o instanceof Diagnostic)) {
            return false;
        }
        Diagnostic that = (Diagnostic) o;
        return severity == that.severity && code.equals(that.code) && message.equals(that.message)
                && details.equals(that.details);
    }

    @Override
    public int hashCode() {
        return Objects.hash(severity, code, message, details);
    }

    @Override
    public String toString() {
        return severity + " " + code + ": " + message + (details.isEmpty() ? "" : " " + new LinkedHashMap<>(details));
    }
}
