package io.tidemark.sqlserver;

import io.tidemark.sync.ErrorCode;

import java.util.Objects;
import java.util.Optional;

/**
 * One finding of {@link SqlServerProvider#preflight}: what was checked, for which tracked object (or the whole
 * database), how it came out and what to do about it.
 */
public final class PreflightCheck {

    /** How a check came out. */
    public enum Status {
        /** As Tidemark needs it. */
        OK,
        /** Works, but something is likely to bite later (a short retention, a case-only name match). */
        WARNING,
        /** Cycles will fail until this is fixed. */
        FAILED
    }

    private final String objectName;
    private final String check;
    private final Status status;
    private final String message;
    private final ErrorCode code;

    private PreflightCheck(String objectName, String check, Status status, String message, ErrorCode code) {
        this.objectName = objectName;
        this.check = Objects.requireNonNull(check, "check");
        this.status = Objects.requireNonNull(status, "status");
        this.message = Objects.requireNonNull(message, "message");
        this.code = code;
    }

    public static PreflightCheck ok(String objectName, String check, String message) {
        return new PreflightCheck(objectName, check, Status.OK, message, null);
    }

    public static PreflightCheck warning(String objectName, String check, String message) {
        return new PreflightCheck(objectName, check, Status.WARNING, message, null);
    }

    /** @param code the error a cycle would fail with */
    public static PreflightCheck failed(String objectName, String check, ErrorCode code, String message) {
        return new PreflightCheck(objectName, check, Status.FAILED, message, Objects.requireNonNull(code, "code"));
    }

    /** The tracked object the check is about; empty for database-wide checks. */
    public Optional<String> objectName() {
        return Optional.ofNullable(objectName);
    }

    /** A short name of what was checked, such as {@code "snapshot isolation"}. */
    public String check() {
        return check;
    }

    public Status status() {
        return status;
    }

    public String message() {
        return message;
    }

    /** For a failed check, the error code a cycle would fail with. */
    public Optional<ErrorCode> code() {
        return Optional.ofNullable(code);
    }

    @Override
    public String toString() {
        return status + " " + (objectName == null ? "" : "[" + objectName + "] ") + check + ": " + message;
    }
}
