package io.tidemark.history.internal.query;

import io.tidemark.history.internal.HistoryTransactions;
import io.tidemark.history.internal.ddl.HistoryNames;
import io.tidemark.sync.internal.jdbc.Jdbc;
import io.tidemark.history.internal.catalog.CatalogReader;
import io.tidemark.history.internal.catalog.Registry;
import io.tidemark.history.internal.catalog.RegistryEntry;
import io.tidemark.history.internal.ddl.HistorySql;
import com.fasterxml.jackson.databind.JsonNode;
import io.tidemark.history.ChangeContext;
import io.tidemark.history.HistoryQueries;
import io.tidemark.history.HistoryRow;
import io.tidemark.history.TemporalTable;
import io.tidemark.history.VersionDiff;
import io.tidemark.sync.ErrorCode;
import io.tidemark.sync.Operation;
import io.tidemark.sync.TidemarkException;
import io.tidemark.sync.internal.sql.PgName;
import io.tidemark.sync.internal.sql.SqlTemplate;

import javax.sql.DataSource;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Timestamp;
import java.time.Instant;
import java.time.OffsetDateTime;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.stream.Collectors;

/**
 * {@link HistoryQueries} over JDBC. Every value is bound; only names (from the registry, quoted) are spliced.
 * Whole-table and window queries are written against {@code tstzrange(valid_from, valid_to)} so the GiST index
 * serves them; per-key queries use the (key, valid_from DESC) index.
 */
public final class JdbcHistoryQueries implements HistoryQueries {

    private final TemporalTable config;
    private final DataSource dataSource;
    private final String object;
    private final java.util.function.BiConsumer<String, Object[]> statementListener;
    /** The history's columns and key, read from the registry once and checked on every query. */
    private volatile Layout layout;

    public JdbcHistoryQueries(TemporalTable config, DataSource dataSource) {
        this(config, dataSource, (sql, params) -> { });
    }

    /** For tests that check the plans of the generated statements: sees every statement and its parameters. */
    JdbcHistoryQueries(TemporalTable config, DataSource dataSource,
                       java.util.function.BiConsumer<String, Object[]> statementListener) {
        this.config = config;
        this.dataSource = Objects.requireNonNull(dataSource, "dataSource");
        this.object = HistoryNames.table(config).toString();
        this.statementListener = statementListener;
    }

    @Override
    public List<HistoryRow> asOf(Instant at) {
        return run("an as-of query", at, call -> call.layout.currentInTable
                ? call.select(SqlTemplate.of("WHERE tstzrange(h.valid_from, h.valid_to) @> ?::timestamptz"
                        + " AND h.{{stored_start}} <= ? ORDER BY {{key_order}}")
                        .with("stored_start", STORED_START).with("key_order", call.layout.keyOrder()).render(), ts(at), ts(at))
                : call.select(SqlTemplate.of(
                        "WHERE tstzrange(h.valid_from, h.valid_to) @> ?::timestamptz ORDER BY {{key_order}}")
                .with("key_order", call.layout.keyOrder()).render(), ts(at)));
    }

    /**
     * The history view of {@code HistoryStorage.CURRENT_IN_TABLE} also has each version's start as stored, before
     * the clamp: a condition on it is pushed into the view's branch over the table, so rows that began later are
     * skipped before their clamp is looked up. Redundant (a clamped start is never earlier), only faster.
     */
    private static final String STORED_START = PgName.quote(CatalogReader.CURRENT_FROM_COLUMN);

    @Override
    public Optional<HistoryRow> asOf(Instant at, Object... key) {
        return run("an as-of query", at, call -> {
            List<Object> params = call.layout.keyParams(key);
            params.add(ts(at));
            params.add(ts(at));
            return call.select(SqlTemplate.of("""
                            WHERE {{key_match}} AND h.valid_from <= ? AND h.valid_to > ? \
                            ORDER BY h.valid_from DESC, h.valid_to DESC LIMIT 1""")
                    .with("key_match", call.layout.keyMatch()).render(), params.toArray()).stream().findFirst();
        });
    }

    @Override
    public List<HistoryRow> versions(Object... key) {
        return run("a versions query", null, call -> call.select(SqlTemplate.of(
                        "WHERE {{key_match}} AND h.operation <> 3 ORDER BY h.valid_from, h.valid_to, h.history_id")
                .with("key_match", call.layout.keyMatch()).render(), call.layout.keyParams(key).toArray()));
    }

    @Override
    public List<HistoryRow> history(Object... key) {
        return run("a history query", null, call -> call.select(SqlTemplate.of(
                        "WHERE {{key_match}} ORDER BY h.valid_from, h.valid_to, h.history_id")
                .with("key_match", call.layout.keyMatch()).render(), call.layout.keyParams(key).toArray()));
    }

    @Override
    public List<HistoryRow> overlapping(Instant from, Instant to) {
        return window("&& tstzrange(?::timestamptz, ?::timestamptz)", from, to);
    }

    @Override
    public List<HistoryRow> containedIn(Instant from, Instant to) {
        // Tombstones have an empty period, which every range contains: they are not versions, so leave them out.
        return window("<@ tstzrange(?::timestamptz, ?::timestamptz, '[]') AND h.operation <> 3", from, to);
    }

    /** Versions whose period relates to the window by {@code predicate}, written on the range the GiST index holds. */
    private List<HistoryRow> window(String predicate, Instant from, Instant to) {
        checkWindow(from, to);
        return run("a window query", from, call -> call.select(SqlTemplate.of(
                        "WHERE tstzrange(h.valid_from, h.valid_to) {{predicate}} ORDER BY {{key_order}}, h.valid_from")
                .with("predicate", predicate).with("key_order", call.layout.keyOrder()).render(), ts(from), ts(to)));
    }

    @Override
    public VersionDiff diff(long fromHistoryId, long toHistoryId) {
        return run("a diff", null, call -> {
            Layout layout = call.layout;
            Connection c = call.c;
            List<HistoryRow> rows = call.select("WHERE h.history_id IN (?, ?)", fromHistoryId, toHistoryId);
            HistoryRow from = rows.stream().filter(r -> r.historyId() == fromHistoryId).findFirst()
                    .orElseThrow(() -> missing(fromHistoryId));
            HistoryRow to = rows.stream().filter(r -> r.historyId() == toHistoryId).findFirst()
                    .orElseThrow(() -> missing(toHistoryId));
            // jsonb images compare by value: numeric 1.0 = 1.00, json by content; works for every type.
            String sql = SqlTemplate.of("""
                    SELECT c.name FROM pg_catalog.unnest(?::text[]) WITH ORDINALITY AS c(name, ord), \
                    {{history}} AS a, {{history}} AS b \
                    WHERE a.history_id = ? AND b.history_id = ? \
                    AND (pg_catalog.to_jsonb(a) -> c.name) IS DISTINCT FROM (pg_catalog.to_jsonb(b) -> c.name) \
                    ORDER BY c.ord""").with("history", layout.history).render();
            List<String> changed = Jdbc.query(c, sql, rs -> rs.getString(1),
                    c.createArrayOf("text", layout.columns.toArray()), fromHistoryId, toHistoryId);
            Map<String, VersionDiff.Change> changes = new LinkedHashMap<>();
            for (String column : changed) {
                changes.put(column, new VersionDiff.Change(from.values().get(column), to.values().get(column)));
            }
            return new VersionDiff(from, to, changes);
        });
    }

    private TidemarkException missing(long id) {
        return TidemarkException.forObject(ErrorCode.INVALID_CONFIGURATION, object, "history row " + id
                + " does not exist in " + HistoryNames.history(config) + " (pruned, or an id of another table)");
    }

    private void checkWindow(Instant from, Instant to) {
        Objects.requireNonNull(from, "from");
        Objects.requireNonNull(to, "to");
        if (to.isBefore(from)) {
            throw TidemarkException.forObject(ErrorCode.INVALID_CONFIGURATION, object, "window [" + from + ", " + to
                    + "] ends before it starts; swap the bounds");
        }
    }

    @FunctionalInterface
    private interface Query<T> {
        T run(Call call) throws SQLException;
    }

    private static final String REGISTRY_CHECK = SqlTemplate.of("""
            SELECT r.pruned_before, r.versioned_columns::text, r.orphan_columns::text FROM {{registry}} AS r \
            WHERE r.source_schema = ? AND r.source_table = ?""").with("registry", HistorySql.REGISTRY).render();

    /**
     * Runs a query. Each statement is sent together with a read of this table's registry row, in one round trip
     * and in that order: under READ COMMITTED a prune that deleted versions before the data was read had already
     * committed its horizon, so the second read sees it and the answer is refused rather than returned incomplete.
     * The registry row also tells whether the cached column layout is still current (evolve changes it).
     */
    private <T> T run(String what, Instant at, Query<T> query) {
        try (Connection c = dataSource.getConnection()) {
            try {
                Layout current = layout != null ? layout : loadLayout(c);
                try {
                    return query.run(new Call(c, current, at, what));
                } catch (StaleLayout stale) {
                    return query.run(new Call(c, loadLayout(c), at, what));
                }
            } finally {
                if (!c.getAutoCommit()) {
                    c.rollback(); // read only: never leave a transaction open on a pooled connection
                }
            }
        } catch (SQLException e) {
            throw HistoryTransactions.translate(e, dataSource, object, what);
        }
    }

    private Layout loadLayout(Connection c) throws SQLException {
        RegistryEntry entry = Registry.find(c, HistoryNames.table(config)).orElseThrow(this::notRegistered);
        Layout loaded = new Layout(entry);
        layout = loaded;
        return loaded;
    }

    private TidemarkException notRegistered() {
        return TidemarkException.forObject(ErrorCode.SCHEMA_DRIFT, object, HistoryNames.table(config)
                + " is not registered as a temporal table; install it first (or grant SELECT on"
                + " tidemark.temporal_tables to this role)");
    }

    /** The registry changed shape since the layout was cached: run the query again with a fresh one. */
    private static final class StaleLayout extends RuntimeException {
        private static final long serialVersionUID = 1L;

        StaleLayout() {
            super(null, null, false, false);
        }
    }

    /** One query: its connection, the layout it uses, the instant it asks about (null if none) and its name. */
    private final class Call {
        final Connection c;
        final Layout layout;
        final Instant at;
        final String what;

        Call(Connection c, Layout layout, Instant at, String what) {
            this.c = c;
            this.layout = layout;
            this.at = at;
            this.what = what;
        }

        /** Selects history rows {@code where}, then reads the registry row in the same round trip and checks it. */
        List<HistoryRow> select(String where, Object... params) throws SQLException {
            String sql = SqlTemplate.of("""
                    SELECT h.history_id, h.operation, h.valid_from, h.valid_to, h.changed_by, h.changed_by_name, \
                    h.correlation_id, h.reason, h.extra::text, {{columns}} FROM {{history}} AS h {{where}}""")
                    .with("columns", layout.columns.stream().map(col -> "h." + PgName.quote(col))
                            .collect(Collectors.joining(", ")))
                    .with("history", layout.history)
                    .with("where", where)
                    .render();
            statementListener.accept(sql, params);
            try (PreparedStatement ps = c.prepareStatement(sql + "; " + REGISTRY_CHECK)) {
                for (int i = 0; i < params.length; i++) {
                    ps.setObject(i + 1, params[i]);
                }
                ps.setString(params.length + 1, HistoryNames.table(config).schema().orElseThrow());
                ps.setString(params.length + 2, HistoryNames.table(config).name());
                ps.execute();
                List<HistoryRow> rows = new ArrayList<>();
                try (ResultSet rs = ps.getResultSet()) {
                    String[] types = JdbcValues.typeNames(rs);
                    while (rs.next()) {
                        rows.add(row(rs, layout, types));
                    }
                }
                if (!ps.getMoreResults()) {
                    throw new SQLException("the registry check returned no result");
                }
                try (ResultSet rs = ps.getResultSet()) {
                    if (!rs.next()) {
                        throw notRegistered();
                    }
                    check(rs.getTimestamp(1), rs.getString(2), rs.getString(3));
                }
                return rows;
            }
        }

        private void check(Timestamp horizon, String versioned, String orphans) {
            if (!RegistryEntry.read(versioned).equals(layout.versionedJson)
                    || !RegistryEntry.read(orphans).equals(layout.orphanJson)) {
                throw new StaleLayout();
            }
            if (at != null && horizon != null && at.isBefore(horizon.toInstant())) {
                throw TidemarkException.forObject(ErrorCode.HISTORY_PRUNED, object, "history before "
                        + horizon.toInstant() + " was pruned, so " + what + " at " + at + " could miss versions;"
                        + " ask for an instant at or after " + horizon.toInstant());
            }
        }
    }

    private static Timestamp ts(Instant instant) {
        return Timestamp.from(Objects.requireNonNull(instant, "instant"));
    }

    private static HistoryRow row(ResultSet rs, Layout layout, String[] types) throws SQLException {
        Map<String, Object> values = new LinkedHashMap<>();
        for (int i = 0; i < layout.columns.size(); i++) {
            values.put(layout.columns.get(i), JdbcValues.read(rs, 10 + i, types[10 + i]));
        }
        List<Object> key = new ArrayList<>();
        layout.keys.forEach(k -> key.add(values.get(k)));
        OffsetDateTime to = rs.getObject(4, OffsetDateTime.class);
        ChangeContext context = ChangeContext.builder().changedBy(rs.getString(5)).changedByName(rs.getString(6))
                .correlationId(rs.getString(7)).reason(rs.getString(8)).extraJson(rs.getString(9)).build();
        return new HistoryRow(rs.getLong(1), operation(rs.getShort(2)), rs.getObject(3, OffsetDateTime.class).toInstant(),
                to == null || to.equals(OffsetDateTime.MAX) ? null : to.toInstant(), values, key, context);
    }

    private static Operation operation(short code) {
        switch (code) {
            case 1:
                return Operation.INSERT;
            case 2:
                return Operation.UPDATE;
            case 3:
                return Operation.DELETE;
            default:
                throw new TidemarkException(ErrorCode.SCHEMA_DRIFT, "history operation code " + code
                        + " is not 1, 2 or 3; the history table was written by something other than its trigger");
        }
    }

    /** The registered columns of the history table: versioned ones first, then orphans of dropped columns. */
    private final class Layout {
        final String history;
        final List<String> keys;
        final List<String> columns = new ArrayList<>();
        // Parsed once: every query compares them with what the registry holds now.
        final JsonNode versionedJson;
        final JsonNode orphanJson;
        final boolean currentInTable;

        Layout(RegistryEntry entry) {
            this.currentInTable = entry.storage() == io.tidemark.history.HistoryStorage.CURRENT_IN_TABLE;
            this.versionedJson = RegistryEntry.read(entry.versionedColumnsJson());
            this.orphanJson = RegistryEntry.read(entry.orphanColumnsJson());
            this.history = entry.historyTable().quoted();
            this.keys = entry.keyColumns();
            entry.versioned().forEach(c -> columns.add(c.name()));
            entry.orphans().forEach(c -> columns.add(c.name()));
        }

        String keyMatch() {
            return keys.stream().map(k -> SqlTemplate.of("h.{{key}} = ?").with("key", PgName.quote(k)).render())
                    .collect(Collectors.joining(" AND "));
        }

        String keyOrder() {
            return keys.stream().map(k -> "h." + PgName.quote(k)).collect(Collectors.joining(", "));
        }

        List<Object> keyParams(Object... key) {
            if (key == null || key.length != keys.size()) {
                throw TidemarkException.forObject(ErrorCode.INVALID_CONFIGURATION, object, "a key of " + HistoryNames.table(config)
                        + " has " + keys.size() + " value(s) " + keys + ", got " + (key == null ? "null"
                        : Arrays.toString(key)));
            }
            return new ArrayList<>(Arrays.asList(key));
        }
    }
}
