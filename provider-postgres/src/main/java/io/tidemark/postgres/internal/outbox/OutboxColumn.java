package io.tidemark.postgres.internal.outbox;

import io.tidemark.sync.internal.sql.PgName;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Objects;

/** One captured column: its name in the table and its key in the change's JSON. */
public final class OutboxColumn {

    private final String name;
    private final String payloadKey;

    public OutboxColumn(String name, String payloadKey) {
        this.name = Objects.requireNonNull(name, "name");
        this.payloadKey = Objects.requireNonNull(payloadKey, "payloadKey");
    }

    /** The columns of these names, each travelling under its renamed key if {@code payloadKeys} has one. */
    public static List<OutboxColumn> list(List<String> names, Map<String, String> payloadKeys) {
        List<OutboxColumn> columns = new ArrayList<>(names.size());
        for (String name : names) {
            columns.add(new OutboxColumn(name, payloadKeys.getOrDefault(name, name)));
        }
        return columns;
    }

    /** The column name, as stored in the catalog. */
    public String name() {
        return name;
    }

    /** The JSON key the column travels under (also what {@code $changed} lists). */
    public String payloadKey() {
        return payloadKey;
    }

    /** {@code "name"}, quoted. */
    String quotedName() {
        return PgName.quote(name);
    }

    /** {@code "key"}, quoted, for use as a column alias (row_to_json names the JSON keys after aliases). */
    String quotedKey() {
        return PgName.quote(payloadKey);
    }

    @Override
    public boolean equals(Object o) {
        return o instanceof OutboxColumn && name.equals(((OutboxColumn) o).name)
                && payloadKey.equals(((OutboxColumn) o).payloadKey);
    }

    @Override
    public int hashCode() {
        return Objects.hash(name, payloadKey);
    }

    @Override
    public String toString() {
        return name.equals(payloadKey) ? name : name + " as " + payloadKey;
    }
}
