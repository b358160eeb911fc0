package io.tidemark.destinations.jdbc.internal;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.tidemark.sync.Change;
import io.tidemark.sync.ChangeBatch;
import io.tidemark.sync.Operation;
import io.tidemark.sync.SyncType;
import io.tidemark.sync.internal.Json;
import io.tidemark.sync.internal.jdbc.Transactions;

import javax.sql.DataSource;
import java.io.IOException;
import java.math.BigDecimal;
import java.sql.Connection;
import java.sql.DatabaseMetaData;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.function.IntFunction;

/**
 * Applies one page in one transaction: record the page as the destination's position (which locks the row and
 * returns the position it replaced), decide from the replaced one whether the page was applied already (then roll
 * back), apply the page, commit. Because the
 * position commits with the rows, a page is applied exactly once whatever fails when: a crash before the commit
 * leaves neither, and the page offered again is applied then; a crash after it leaves both, and the page offered
 * again is skipped.
 *
 * <p>The bookkeeping is one statement at the start: it records the page as the position and returns the position
 * it replaced; when that says the page was applied already, the transaction is rolled back instead.
 *
 * <p>A FULL export of one page replaces the table's content in that transaction. A FULL export of several pages
 * stages pages 1 to n-1 (each in its own transaction, with the position) in the stage table, and its last page
 * empties the table, writes the staged pages and itself, and forgets the stage, in one transaction: readers see the
 * old content or the new, never a mix.
 */
public final class PageApplier {

    /** What became of a page. */
    public enum Outcome {
        APPLIED,
        STAGED,
        SKIPPED
    }

    private final DataSource dataSource;
    private final TableDialect dialect;
    private final TableMapping mapping;
    private final String destination;
    private final int batchSize;
    private final int timeoutSeconds;
    private final boolean createTables;
    /** Generated statement texts by shape, built once. */
    private final Map<String, String> statements = new ConcurrentHashMap<>();
    private volatile int[] columnTypes;
    private volatile boolean tablesReady;

    public PageApplier(DataSource dataSource, TableDialect dialect, TableMapping mapping, String destination,
                       int batchSize, int timeoutSeconds, boolean createTables) {
        this.dataSource = dataSource;
        this.dialect = dialect;
        this.mapping = mapping;
        this.destination = destination;
        this.batchSize = batchSize;
        this.timeoutSeconds = timeoutSeconds;
        this.createTables = createTables;
    }

    public Outcome apply(ChangeBatch batch) throws SQLException {
        try (Connection c = dataSource.getConnection()) {
            prepare(c);
            return Transactions.inTransaction(c, tx -> applyInTransaction(tx, batch));
        }
    }

    private void prepare(Connection c) throws SQLException {
        if (createTables && !tablesReady) {
            Transactions.inTransaction(c, tx -> {
                dialect.createMissing(tx, mapping);
                return null;
            });
            tablesReady = true;
        }
        if (columnTypes == null) {
            columnTypes = columnTypes(c);
        }
    }

    private Outcome applyInTransaction(Connection c, ChangeBatch batch) throws SQLException {
        Position position = claim(c, batch);
        if (position.decide(batch) == Position.Decision.SKIP) {
            c.rollback(); // undoes the claim: the recorded position stays as it was
            return Outcome.SKIPPED;
        }
        Outcome outcome = Outcome.APPLIED;
        if (batch.syncType() == SyncType.FULL && batch.pageCount() > 1) {
            if (batch.pageNumber() == 1) {
                clearStage(c, batch.objectName());
            } else if (!position.isSameCycle(batch) || position.pageNumber() != batch.pageNumber() - 1) {
                throw new DeliveryProblem("FULL export " + batch.batchId() + ": page " + batch.pageNumber() + "/"
                        + batch.pageCount() + " cannot be applied because the page before it was not (the position"
                        + " records " + position + "); the export has to be offered again from its first page");
            }
            if (batch.isLastPage()) {
                execute(c, dialect.deleteAll(mapping));
                for (int page = 1; page < batch.pageCount(); page++) {
                    applyChanges(c, staged(c, batch.objectName(), page));
                }
                applyChanges(c, batch.changes());
                clearStage(c, batch.objectName());
            } else {
                stage(c, batch);
                outcome = Outcome.STAGED;
            }
        } else {
            if (position.isUnfinishedFull()) {
                // An export that was not continued (the engine moved on): its staged pages will never be used.
                clearStage(c, batch.objectName());
            }
            if (batch.syncType() == SyncType.FULL) {
                execute(c, dialect.deleteAll(mapping));
            }
            applyChanges(c, batch.changes());
        }
        return outcome;
    }

    /** Records {@code batch} as the position and returns the position it replaced. */
    private Position claim(Connection c, ChangeBatch batch) throws SQLException {
        try (PreparedStatement ps = prepare(c, dialect.claimPosition(mapping))) {
            ps.setString(1, destination);
            ps.setString(2, batch.objectName());
            ps.setLong(3, batch.fromVersion());
            ps.setLong(4, batch.toVersion());
            ps.setInt(5, batch.pageNumber());
            ps.setInt(6, batch.pageCount());
            ps.setString(7, batch.idempotencyKey());
            ps.setString(8, batch.syncType().name());
            try (ResultSet rs = ps.executeQuery()) {
                rs.next();
                long from = rs.getLong(1);
                if (rs.wasNull()) {
                    return Position.NONE;
                }
                return new Position(from, rs.getLong(2), rs.getInt(3), rs.getInt(4),
                        SyncType.valueOf(rs.getString(5)));
            }
        }
    }

    /** Applies changes in order: folded per key, then deletes, then writes per shape, all in batches. */
    private void applyChanges(Connection c, List<Change> changes) throws SQLException {
        if (changes.isEmpty()) {
            return;
        }
        PageReduction reduction = new PageReduction(mapping);
        for (Change change : changes) {
            try {
                reduction.add(change);
            } catch (PageReduction.MissingKeyException e) {
                throw new DeliveryProblem(e.getMessage());
            }
        }
        List<RowOp> deletes = reduction.deletes();
        if (!deletes.isEmpty()) {
            String keys = "1".repeat(mapping.keyCount()) + "0".repeat(mapping.columns().size() - mapping.keyCount());
            inChunks(c, keys, deletes, rows -> statements.computeIfAbsent("delete:" + rows,
                    k -> dialect.delete(mapping, rows)));
        }
        for (Map.Entry<String, List<RowOp>> shape : reduction.upsertsByShape().entrySet()) {
            String mask = shape.getKey();
            inChunks(c, mask, shape.getValue(), rows -> statements.computeIfAbsent(mask + ':' + rows,
                    k -> dialect.upsert(mapping, mask, rows)));
        }
        for (Map.Entry<String, List<RowOp>> shape : reduction.updatesByShape().entrySet()) {
            String mask = shape.getKey();
            if (mask.indexOf('1', mapping.keyCount()) < 0) {
                continue; // an update that changed none of the mapped columns
            }
            String sql = statements.computeIfAbsent("update:" + mask, k -> dialect.update(mapping, mask));
            try (PreparedStatement ps = prepare(c, sql)) {
                int pending = 0;
                for (RowOp row : shape.getValue()) {
                    int index = 1;
                    for (int i = row.keyCount; i < row.values.length; i++) {
                        if (mask.charAt(i) == '1') {
                            bind(ps, index++, row.values[i], columnTypes[i]);
                        }
                    }
                    for (int i = 0; i < row.keyCount; i++) {
                        bind(ps, index++, row.values[i], columnTypes[i]);
                    }
                    pending = added(ps, pending);
                }
                flush(ps, pending);
            }
        }
    }

    /**
     * Writes rows (upserts, or deletes by key) many per statement, binding the columns of {@code mask} of each:
     * full statements of {@link TableDialect#rowsPerStatement} rows as one JDBC batch, the rest in statements of
     * 64, 32, ... 1 rows, so a table meets few statement texts (each prepared once per connection and reused).
     */
    private void inChunks(Connection c, String mask, List<RowOp> rows, IntFunction<String> sqlFor)
            throws SQLException {
        int columns = (int) mask.chars().filter(ch -> ch == '1').count();
        int perStatement = dialect.rowsPerStatement(columns);
        int done = 0;
        int full = rows.size() / perStatement;
        if (full > 0) {
            try (PreparedStatement ps = prepare(c, sqlFor.apply(perStatement))) {
                int pending = 0;
                for (int s = 0; s < full; s++) {
                    bindRows(ps, mask, rows.subList(done, done + perStatement));
                    done += perStatement;
                    ps.addBatch();
                    pending += perStatement;
                    if (pending >= batchSize) {
                        ps.executeBatch();
                        pending = 0;
                    }
                }
                flush(ps, pending);
            }
        }
        for (int size = Integer.highestOneBit(Math.max(1, perStatement - 1)); done < rows.size(); size >>= 1) {
            if (rows.size() - done >= size) {
                try (PreparedStatement ps = prepare(c, sqlFor.apply(size))) {
                    bindRows(ps, mask, rows.subList(done, done + size));
                    ps.executeUpdate();
                }
                done += size;
            }
        }
    }

    private void bindRows(PreparedStatement ps, String mask, List<RowOp> rows) throws SQLException {
        int index = 1;
        for (RowOp row : rows) {
            for (int i = 0; i < row.values.length; i++) {
                if (mask.charAt(i) == '1') {
                    bind(ps, index++, row.values[i], columnTypes[i]);
                }
            }
        }
    }

    /** Adds the bound row to the batch and sends the batch when it is full; returns the rows still pending. */
    private int added(PreparedStatement ps, int pending) throws SQLException {
        ps.addBatch();
        if (pending + 1 == batchSize) {
            ps.executeBatch();
            return 0;
        }
        return pending + 1;
    }

    private static void flush(PreparedStatement ps, int pending) throws SQLException {
        if (pending > 0) {
            ps.executeBatch();
        }
    }

    private void stage(Connection c, ChangeBatch batch) throws SQLException {
        try (PreparedStatement ps = prepare(c, dialect.stageInsert(mapping))) {
            int ordinal = 0;
            int pending = 0;
            for (Change change : batch.changes()) {
                ps.setString(1, destination);
                ps.setString(2, batch.objectName());
                ps.setInt(3, batch.pageNumber());
                ps.setInt(4, ++ordinal);
                ps.setString(5, change.rawJson());
                pending = added(ps, pending);
            }
            flush(ps, pending);
        }
    }

    /** One staged page read back as changes (a staged FULL row is an insert unless it says otherwise). */
    private List<Change> staged(Connection c, String objectName, int page) throws SQLException {
        List<Change> changes = new ArrayList<>();
        try (PreparedStatement ps = prepare(c, dialect.stageRead(mapping))) {
            ps.setString(1, destination);
            ps.setString(2, objectName);
            ps.setInt(3, page);
            try (ResultSet rs = ps.executeQuery()) {
                while (rs.next()) {
                    ObjectNode node = (ObjectNode) Json.MAPPER.readTree(rs.getString(1));
                    Operation operation = Operation.fromCode(node.path("$operation").asText(null)).orElse(null);
                    changes.add(Change.of(operation, null, null, node));
                }
            }
        } catch (IOException e) {
            throw new SQLException("a staged change of " + objectName + " page " + page + " is not JSON: " + e, e);
        }
        return changes;
    }

    private void clearStage(Connection c, String objectName) throws SQLException {
        try (PreparedStatement ps = prepare(c, dialect.stageClear(mapping))) {
            ps.setString(1, destination);
            ps.setString(2, objectName);
            ps.executeUpdate();
        }
    }

    private void execute(Connection c, String sql) throws SQLException {
        try (PreparedStatement ps = prepare(c, sql)) {
            ps.executeUpdate();
        }
    }

    private PreparedStatement prepare(Connection c, String sql) throws SQLException {
        PreparedStatement ps = c.prepareStatement(sql);
        ps.setQueryTimeout(timeoutSeconds);
        return ps;
    }

    private void bind(PreparedStatement ps, int index, JsonNode value, int columnType) throws SQLException {
        if (value == null || value.isNull() || value.isMissingNode()) {
            dialect.bindNull(ps, index, columnType);
        } else if (value.isBoolean()) {
            ps.setBoolean(index, value.booleanValue());
        } else if (value.isIntegralNumber()) {
            if (value.canConvertToLong()) {
                ps.setLong(index, value.longValue());
            } else {
                ps.setBigDecimal(index, new BigDecimal(value.bigIntegerValue()));
            }
        } else if (value.isNumber()) {
            ps.setBigDecimal(index, value.decimalValue());
        } else if (value.isTextual()) {
            dialect.bindText(ps, index, value.textValue());
        } else {
            // An object or an array: its JSON text, for a json/jsonb or text column.
            dialect.bindText(ps, index, value.toString());
        }
    }

    /** The JDBC types of the mapped columns, read from the catalog; a missing table or column is named. */
    private int[] columnTypes(Connection c) throws SQLException {
        DatabaseMetaData meta = c.getMetaData();
        String escape = meta.getSearchStringEscape();
        Map<String, Integer> found = new HashMap<>();
        String schema = mapping.table().schema().orElse(dialect.defaultSchema());
        try (ResultSet rs = meta.getColumns(null, pattern(schema, escape), pattern(mapping.table().name(), escape),
                null)) {
            while (rs.next()) {
                if (schema.equals(rs.getString("TABLE_SCHEM")) && mapping.table().name().equals(rs.getString("TABLE_NAME"))) {
                    found.put(rs.getString("COLUMN_NAME"), rs.getInt("DATA_TYPE"));
                }
            }
        }
        if (found.isEmpty()) {
            throw new DeliveryProblem("the table " + mapping.table() + " does not exist, or this login cannot see it");
        }
        int[] types = new int[mapping.columns().size()];
        List<String> missing = new ArrayList<>();
        for (int i = 0; i < types.length; i++) {
            Integer type = found.get(mapping.columns().get(i).name());
            if (type == null) {
                missing.add(mapping.columns().get(i).name());
            } else {
                types[i] = type;
            }
        }
        if (!missing.isEmpty()) {
            throw new DeliveryProblem("the table " + mapping.table() + " has no column " + String.join(", ", missing)
                    + " (it has " + String.join(", ", found.keySet().stream().sorted().toList()) + ")");
        }
        return types;
    }

    private static String pattern(String name, String escape) {
        if (escape == null || escape.isEmpty()) {
            return name;
        }
        return name.replace(escape, escape + escape).replace("_", escape + "_").replace("%", escape + "%");
    }
}
