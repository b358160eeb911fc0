package io.tidemark.history;

import io.tidemark.sync.internal.sql.PgName;

import java.util.Objects;

/**
 * A schema-qualified table name as Tidemark resolved it: unquoted names folded to lower case, a missing schema
 * filled in. {@link #toString()} is the readable form used in messages; {@link #quoted()} is what the generated SQL
 * uses.
 *
 * @param schema the schema, never null
 * @param name   the table's name, never null
 */
public record TableName(String schema, String name) {

    public TableName {
        Objects.requireNonNull(schema, "schema");
        Objects.requireNonNull(name, "name");
    }

    /** The name with both parts double-quoted, as in SQL: {@code "schema"."name"}. */
    public String quoted() {
        return PgName.of(schema, name).quoted();
    }

    /** Readable form, for messages: {@code schema.name}. */
    @Override
    public String toString() {
        return schema + '.' + name;
    }
}
