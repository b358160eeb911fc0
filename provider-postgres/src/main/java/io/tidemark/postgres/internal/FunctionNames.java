package io.tidemark.postgres.internal;

import io.tidemark.sync.TidemarkException;
import io.tidemark.sync.TrackedObject;
import io.tidemark.sync.internal.sql.PgName;

/**
 * Whether a tracked object calls a given function. An object's procedure may be unqualified (found through
 * the role's search_path when called); it then matches any function of that name, which errs on the side of
 * "reads this outbox" (trimming keeps more, wake-ups wake more).
 */
public final class FunctionNames {

    /** What PostgreSQL reads unquoted as exactly these characters. */
    private static final java.util.regex.Pattern PLAIN = java.util.regex.Pattern.compile("[a-z_][a-z0-9_$]*");

    private FunctionNames() {
    }

    /**
     * The name as text that {@link PgName#parse} reads back as the same name: parts quoted only where they must be
     * ({@code public.items_changes}, but {@code "Sales"."Items_changes"}). Used wherever a name is handed to
     * users or to a tracked object.
     */
    public static String text(PgName name) {
        return name.schema().map(s -> part(s) + ".").orElse("") + part(name.name());
    }

    private static String part(String identifier) {
        return PLAIN.matcher(identifier).matches() ? identifier : PgName.quote(identifier);
    }

    /** True when {@code object}'s procedure names {@code function} (schema-qualified). */
    public static boolean calls(TrackedObject object, PgName function) {
        PgName procedure;
        try {
            procedure = PgName.parse(object.procedure(), "function");
        } catch (TidemarkException e) {
            return false;
        }
        return matches(procedure, function);
    }

    /** Unqualified on either side matches by name; qualified on both sides must be equal. */
    public static boolean matches(PgName procedure, PgName function) {
        if (procedure.schema().isPresent() && function.schema().isPresent()) {
            return procedure.equals(function);
        }
        return procedure.name().equals(function.name());
    }
}
