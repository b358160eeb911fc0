package io.tidemark.sync.internal.sql;

import java.util.Objects;
import java.util.Optional;

/**
 * What a PostgreSQL and a SQL Server name share: an optional schema and a name, both already resolved and checked,
 * rendered with every part quoted in the dialect's way. Two names are equal when they are of the same dialect
 * and have the same parts.
 */
public abstract class QualifiedName {

    private final String schema;
    private final String name;

    QualifiedName(String schema, String name) {
        this.schema = schema;
        this.name = name;
    }

    /** Quotes one part the dialect's way. */
    abstract String quotePart(String part);

    public Optional<String> schema() {
        return Optional.ofNullable(schema);
    }

    public String name() {
        return name;
    }

    /** The schema quoted the dialect's way; empty when the name has none. */
    public Optional<String> quotedSchema() {
        return schema().map(this::quotePart);
    }

    /** The name with every part quoted: {@code "schema"."name"} or {@code [schema].[name]}, or the name alone. */
    public String quoted() {
        return schema == null ? quotePart(name) : quotePart(schema) + '.' + quotePart(name);
    }

    /** Human-readable form, for messages: {@code schema.name}. */
    @Override
    public String toString() {
        return schema == null ? name : schema + '.' + name;
    }

    @Override
    public boolean equals(Object o) {
        if (this == o) {
            return true;
        }
        if (o == null || o.getClass() != getClass()) {
            return false;
        }
        QualifiedName that = (QualifiedName) o;
        return Objects.equals(schema, that.schema) && name.equals(that.name);
    }

    @Override
    public int hashCode() {
        return Objects.hash(schema, name);
    }
}
