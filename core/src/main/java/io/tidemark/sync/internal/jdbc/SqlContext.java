package io.tidemark.sync.internal.jdbc;

import io.tidemark.sync.ErrorCode;
import io.tidemark.sync.TidemarkException;

import javax.sql.DataSource;

/**
 * What was being done when a statement failed, so every message names it: the object or store involved (the
 * message's prefix), the action as a gerund phrase ({@code "installing the outbox of public.items"}) and the database it ran against.
 *
 * @param object the tracked object, table or store the work was about; null when there is none
 * @param doing  what was being done, as a gerund phrase that reads after "while" and before "failed"
 * @param target the database: its JDBC URL without the password, or whatever is known ({@link JdbcTarget})
 */
public record SqlContext(String object, String doing, String target) {

    /** The context of work on {@code dataSource}, whose URL (without password) names the target. */
    public static SqlContext of(DataSource dataSource, String object, String doing) {
        return new SqlContext(object, doing, JdbcTarget.describe(dataSource));
    }

    /** An error with {@code code} about this context's object. */
    public TidemarkException error(ErrorCode code, String message, Throwable cause) {
        return object == null ? new TidemarkException(code, capitalized(message), cause)
                : TidemarkException.forObject(code, object, message, cause);
    }

    private static String capitalized(String message) {
        return message.isEmpty() ? message : Character.toUpperCase(message.charAt(0)) + message.substring(1);
    }
}
