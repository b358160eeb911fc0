package io.tidemark.sync;

import java.util.Objects;
import java.util.Optional;

/**
 * The one exception Tidemark throws. It is unchecked, carries an {@link ErrorCode}, and, where the failure
 * belongs to one tracked object or database object, the name of that object.
 *
 * <p>Messages are written for the person who has to act: what happened, to which object, and what to do.
 */
public class TidemarkException extends RuntimeException {

    private static final long serialVersionUID = 1L;

    private final ErrorCode code;
    private final String objectName;

    public TidemarkException(ErrorCode code, String message) {
        this(code, null, message, null);
    }

    public TidemarkException(ErrorCode code, String message, Throwable cause) {
        this(code, null, message, cause);
    }

    public TidemarkException(ErrorCode code, String objectName, String message, Throwable cause) {
        super(Objects.requireNonNull(message, "message"), cause);
        this.code = Objects.requireNonNull(code, "code");
        this.objectName = objectName;
    }

    /** Creates an exception about one named object; the message is prefixed with the object's name. */
    public static TidemarkException forObject(ErrorCode code, String objectName, String message) {
        return forObject(code, objectName, message, null);
    }

    /** Creates an exception about one named object; the message is prefixed with the object's name. */
    public static TidemarkException forObject(ErrorCode code, String objectName, String message, Throwable cause) {
        return new TidemarkException(code, objectName, "[" + objectName + "] " + message, cause);
    }

    public ErrorCode code() {
        return code;
    }

    /** The tracked object (or database object) the failure belongs to, when there is one. */
    public Optional<String> objectName() {
        return Optional.ofNullable(objectName);
    }

    @Override
    public String toString() {
        return "TidemarkException[" + code + "]: " + getMessage();
    }
}
