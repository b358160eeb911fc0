package io.tidemark.postgres.internal;

import io.tidemark.sync.TidemarkException;
import io.tidemark.sync.TrackedObject;
import io.tidemark.sync.sql.PgName;

/**
 * Whether a tracked object calls a given function. An object's procedure may be unqualified (found through
 * the role's search_path when called); it then matches any function of that name, which errs on the side of
 * "reads this outbox" (trimming keeps more, wake-ups wake more).
 */
public final class FunctionNames {

    private FunctionNames() {
    }

    /** True when {@code object}'s procedure names {@code function} (schema-qualified). */
    public static boolean calls(TrackedObject object, PgName function) {
        PgName procedure;
        try {
            procedure = PgName.parse(object.procedure(), "function");
        } catch (TidemarkException e) {
            return false;
        }
        return procedure.schema().isPresent() ? procedure.equals(function) : procedure.name().equals(function.name());
    }
}
