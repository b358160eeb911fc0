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
 */
public record TableShape(PgName table, List<Column> allColumns, List<Column> versioned, List<Column> keyColumns) {

    public TableShape {
        allColumns = List.copyOf(allColumns);
        versioned = List.copyOf(versioned);
        keyColumns = List.copyOf(keyColumns);
    }

    public boolean isVersioned(String name) {
        return versioned.stream().anyMatch(c -> c.name().equals(name));
    }
}
