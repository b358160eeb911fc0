package io.tidemark.history;

import javax.sql.DataSource;
import java.sql.Timestamp;
import java.time.Instant;
import java.util.List;
import java.util.Map;
import java.util.stream.Collectors;

/** A key's history rows read straight from a history table, oldest first, for assertions. */
public record Versions(List<V> rows) {

    /** One history row: operation code, period (to = null when open) and the row's values. */
    public record V(int op, Instant from, Instant to, Map<String, Object> row) {
        public Object get(String column) {
            return row.get(column);
        }
    }

    public static Versions of(DataSource ds, String historyTable, String where, Object... params) {
        List<Map<String, Object>> rows = Db.rows(ds, "SELECT *, CASE WHEN valid_to = 'infinity' THEN NULL"
                + " ELSE valid_to END AS period_end FROM " + historyTable + " WHERE " + where
                + " ORDER BY valid_from, valid_to, history_id", params);
        return new Versions(rows.stream().map(r -> new V(((Number) r.get("operation")).intValue(),
                ((Timestamp) r.get("valid_from")).toInstant(),
                r.get("period_end") == null ? null : ((Timestamp) r.get("period_end")).toInstant(), r))
                .collect(Collectors.toList()));
    }

    public int size() {
        return rows.size();
    }

    public V get(int i) {
        return rows.get(i);
    }

    public V last() {
        return rows.get(rows.size() - 1);
    }

    public List<Integer> ops() {
        return rows.stream().map(V::op).collect(Collectors.toList());
    }
}
