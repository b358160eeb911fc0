package io.tidemark.destinations.jdbc.internal;

import io.tidemark.sync.internal.sql.QualifiedName;

import java.util.List;

/**
 * The target table and how a change's fields map onto its columns: key columns first, in the configured order,
 * then the other columns. Checked and quoted when the destination is built.
 *
 * @param table     the target table, schema-qualified
 * @param positions the table of the destinations' positions, schema-qualified
 * @param stage     the table that holds the pages of an unfinished FULL export, schema-qualified
 * @param columns   key columns first
 */
public record TableMapping(QualifiedName table, QualifiedName positions, QualifiedName stage, List<Column> columns) {

    public TableMapping {
        columns = List.copyOf(columns);
    }

    public int keyCount() {
        int n = 0;
        for (Column c : columns) {
            if (c.key()) {
                n++;
            }
        }
        return n;
    }
}
