package io.tidemark.history.internal.catalog;

import io.tidemark.sync.internal.sql.PgName;

import java.util.Objects;

/**
 * One column of a table as the catalog describes it.
 *
 * @param name       the column name as stored (not folded, not quoted)
 * @param type       {@code format_type(atttypid, atttypmod)} read with a pinned search_path, so user types are
 *                   schema-qualified and precision, length and array dimensions are kept
 * @param collation  a quoted, qualified collation when it differs from the type's default, else null
 * @param noEquality true when the type has no default equality (json, xml, point, composites, arrays of those):
 *                   such columns are compared as text in the no-op test, since {@code IS DISTINCT FROM} would fail
 */
public record Column(String name, String type, String collation, boolean noEquality) {

    public Column {
        Objects.requireNonNull(name, "name");
        Objects.requireNonNull(type, "type");
    }

    public String quoted() {
        return PgName.quote(name);
    }

    /** Type with collation, as it is written in a column definition. */
    public String typeDefinition() {
        return collation == null ? type : type + " COLLATE " + collation;
    }
}
