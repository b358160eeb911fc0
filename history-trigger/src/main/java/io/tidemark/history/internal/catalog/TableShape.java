package io.tidemark.history.internal.catalog;

import io.tidemark.sync.internal.sql.PgName;

import java.util.List;

/**
 * What the generator needs to know about a table: its columns in order, which of them are versioned and which
 * form the primary key.
 *
 * @param table        the table, schema-qualified
 * @param allColumns   every live column in attnum order (excluded ones too: the as-of function returns the row type)
 * @param versioned    the columns copied into history, in table order
 * @param keyColumns   the primary-key columns, in key order (always versioned)
 * @param generated    the names of the generated columns (computed from the row's other columns): versioned with
 *                     their values, but a BEFORE trigger cannot read their new value, so changes are seen in the
 *                     columns they are computed from
 */
public record TableShape(PgName table, List<Column> allColumns, List<Column> versioned, List<Column> keyColumns,
                         java.util.Set<String> generated) {

    public TableShape {
        allColumns = List.copyOf(allColumns);
        versioned = List.copyOf(versioned);
        keyColumns = List.copyOf(keyColumns);
        generated = java.util.Set.copyOf(generated);
    }

    /** A table without generated columns. */
    public TableShape(PgName table, List<Column> allColumns, List<Column> versioned, List<Column> keyColumns) {
        this(table, allColumns, versioned, keyColumns, java.util.Set.of());
    }

    /** The versioned columns whose change a BEFORE trigger can see in NEW: all but the generated ones. */
    public List<Column> comparable() {
        return versioned.stream().filter(c -> !generated.contains(c.name())).toList();
    }

    public boolean isVersioned(String name) {
        return versioned.stream().anyMatch(c -> c.name().equals(name));
    }
}
