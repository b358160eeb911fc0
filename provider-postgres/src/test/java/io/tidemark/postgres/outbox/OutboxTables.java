package io.tidemark.postgres.outbox;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.tidemark.postgres.CaptureShape;
import io.tidemark.postgres.PostgresOutbox;
import io.tidemark.postgres.PostgresProvider;
import io.tidemark.sync.SyncEngine;
import io.tidemark.sync.spi.WatermarkStore;
import io.tidemark.testing.RecordingDestination;
import io.tidemark.testing.TestDatabase;

import javax.sql.DataSource;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.UnaryOperator;

/**
 * A tracked table with its outbox installed, in a test database: creates the table under a fresh name, installs
 * the outbox, and reads back what was captured and what the change function returns.
 */
final class OutboxTables {

    static final ObjectMapper JSON = new ObjectMapper();
    private static final AtomicInteger NAMES = new AtomicInteger();

    final TestDatabase database;
    final String table;
    final PostgresOutbox outbox;
    final CaptureShape shape;
    /** KEYS: what a reader reading after every {@link #execute} received, and the version it read through. */
    private final List<String> delivered = new ArrayList<>();
    private long readThrough;

    private OutboxTables(TestDatabase database, String table, PostgresOutbox outbox, CaptureShape shape) {
        this.database = database;
        this.table = table;
        this.outbox = outbox;
        this.shape = shape;
        if (shape == CaptureShape.KEYS) {
            readThrough = seed();
        }
    }

    /**
     * Creates {@code public.<prefix>_<n>} with the given column definitions and installs its outbox.
     *
     * @param columns the body of CREATE TABLE, such as {@code "id int PRIMARY KEY, name text"}
     */
    static OutboxTables create(TestDatabase database, String prefix, String columns,
                               UnaryOperator<PostgresOutbox.Builder> configure) {
        return create(CaptureShape.FULL_IMAGE, database, prefix, columns, configure);
    }

    static OutboxTables create(TestDatabase database, String prefix, String columns) {
        return create(CaptureShape.FULL_IMAGE, database, prefix, columns, b -> b);
    }

    /** {@link #create(TestDatabase, String, String, UnaryOperator)} with an outbox of that capture shape. */
    static OutboxTables create(CaptureShape shape, TestDatabase database, String prefix, String columns,
                               UnaryOperator<PostgresOutbox.Builder> configure) {
        String table = prefix + "_" + NAMES.incrementAndGet();
        database.execute("CREATE TABLE public." + table + " (" + columns + ")");
        PostgresOutbox outbox = configure.apply(PostgresOutbox.forTable("public." + table).capture(shape)).build();
        outbox.install(database.dataSource());
        return new OutboxTables(database, table, outbox, shape);
    }

    static OutboxTables create(CaptureShape shape, TestDatabase database, String prefix, String columns) {
        return create(shape, database, prefix, columns, b -> b);
    }

    DataSource dataSource() {
        return database.dataSource();
    }

    /** An engine over the test database that polls only when told (no LISTEN), for tests that drive the cycles. */
    static SyncEngine.Builder engine(TestDatabase database, String name, WatermarkStore store,
                                     RecordingDestination out) {
        return SyncEngine.builder()
                .name(name)
                .provider(PostgresProvider.builder(database.dataSource()).listen(false).build())
                .watermarks(store)
                .destination("out", out);
    }

    void execute(String sql) {
        database.execute(sql.replace("$T", "public." + table));
    }

    /**
     * {@link #execute}, then, with an outbox of keys, a reader reads what it changed: {@link #capturedText} then
     * holds one change per row and statement, as a full-image outbox captures them.
     */
    void write(String sql) {
        execute(sql);
        if (shape == CaptureShape.KEYS) {
            readPending();
        }
    }

    /**
     * The captured changes in capture order, each as the change function returns it. Full images: exactly as
     * stored. Keys: the outbox stores no change as returned, and returns one net change per key and read; so these
     * are the changes a reader received reading after every {@link #write} (and once more now).
     */
    List<String> capturedText() {
        if (shape == CaptureShape.KEYS) {
            readPending();
            return List.copyOf(delivered);
        }
        List<String> changes = new ArrayList<>();
        query("SELECT change::text FROM " + outbox.outboxTable() + " ORDER BY version, id",
                rs -> changes.add(rs.getString(1)));
        return changes;
    }

    /**
     * The outbox's rows in capture order, without what depends on the writer (version, id, xact_id): the stored
     * change of a full image without its {@code $version}; for keys, the row as JSON. Unlike {@link #capturedText},
     * nothing is read through the change function, so several writes of one key stay several rows.
     */
    List<String> outboxRowsText() {
        if (shape != CaptureShape.KEYS) {
            return capturedWithoutVersions();
        }
        List<String> rows = new ArrayList<>();
        query("SELECT (to_jsonb(o) - 'version' - 'id' - 'xact_id')::text FROM " + outbox.outboxTable()
                + " AS o ORDER BY o.version, o.id", rs -> rows.add(rs.getString(1)));
        return rows;
    }

    /** The operation of every change the outbox holds, in capture order. */
    List<String> outboxOperations() {
        List<String> operations = new ArrayList<>();
        query("SELECT operation FROM " + outbox.outboxTable() + " ORDER BY version, id",
                rs -> operations.add(rs.getString(1)));
        return operations;
    }

    /** How many changes the outbox holds (rows, whatever the shape). */
    long outboxRows() {
        return scalar("SELECT count(*) FROM " + outbox.outboxTable());
    }

    /**
     * KEYS: reads everything after {@link #readThrough} into {@link #delivered}, each change's text exactly as
     * returned (json_array_elements keeps it; a JSON library would reformat numbers and spaces).
     */
    private void readPending() {
        List<String> page = new ArrayList<>();
        long[] version = new long[1];
        String[] type = new String[1];
        // MATERIALIZED: one call; a subquery in FROM is pulled up, and the function called per reference and row.
        query("WITH a AS MATERIALIZED (SELECT " + outbox.changeFunction() + "('{\"mode\":\"sync\",\"fromVersion\":"
                        + readThrough + "}'::json) AS r)"
                        + " SELECT (a.r -> 'Metadata' -> 'Sync' ->> 'Version')::bigint, a.r -> 'Metadata' -> 'Sync' ->> 'Type',"
                        + " e.change::text FROM a"
                        + " LEFT JOIN LATERAL json_array_elements(a.r -> 'Data') WITH ORDINALITY AS e(change, n) ON true"
                        + " ORDER BY e.n",
                rs -> {
                    version[0] = rs.getLong(1);
                    type[0] = rs.getString(2);
                    if (rs.getString(3) != null) {
                        page.add(rs.getString(3));
                    }
                });
        if (!"Diff".equals(type[0])) {
            throw new IllegalStateException("expected a diff after version " + readThrough + ", got " + type[0]);
        }
        delivered.addAll(page);
        readThrough = version[0];
    }

    /** {@link #capturedText()}, parsed. */
    List<JsonNode> captured() {
        return capturedText().stream().map(OutboxTables::parse).toList();
    }

    /** A change's text without its {@code "$version":N} member, for comparing what does not depend on the writer. */
    static String withoutVersion(String change) {
        return change.replaceFirst(",\"\\$version\":[0-9]+", "");
    }

    /** {@link #capturedText()} without versions. */
    List<String> capturedWithoutVersions() {
        return capturedText().stream().map(OutboxTables::withoutVersion).toList();
    }

    /** Calls the change function with a raw request and parses its answer. */
    JsonNode call(String request) {
        return call(dataSource(), outbox.changeFunction(), request);
    }

    static JsonNode call(DataSource dataSource, String function, String request) {
        try (Connection c = dataSource.getConnection();
             PreparedStatement s = c.prepareStatement("SELECT " + function + "(?::json)::text")) {
            s.setString(1, request);
            try (ResultSet rs = s.executeQuery()) {
                rs.next();
                return parse(rs.getString(1));
            }
        } catch (SQLException e) {
            throw new IllegalStateException(e);
        }
    }

    JsonNode sync(long fromVersion) {
        return call("{\"fromVersion\":" + fromVersion + ",\"mode\":\"sync\"}");
    }

    JsonNode sync(long fromVersion, int maxRows) {
        return call("{\"fromVersion\":" + fromVersion + ",\"mode\":\"sync\",\"maxRows\":" + maxRows + "}");
    }

    long seed() {
        return call("{\"fromVersion\":0,\"mode\":\"seed\"}").at("/Metadata/Sync/Version").asLong();
    }

    long scalar(String sql) {
        long[] value = new long[1];
        query(sql.replace("$T", "public." + table), rs -> value[0] = rs.getLong(1));
        return value[0];
    }

    interface RowHandler {
        void row(ResultSet rs) throws SQLException;
    }

    void query(String sql, RowHandler handler) {
        try (Connection c = dataSource().getConnection(); Statement s = c.createStatement();
             ResultSet rs = s.executeQuery(sql)) {
            while (rs.next()) {
                handler.row(rs);
            }
        } catch (SQLException e) {
            throw new IllegalStateException(sql, e);
        }
    }

    static JsonNode parse(String json) {
        try {
            return JSON.readTree(json);
        } catch (java.io.IOException e) {
            throw new IllegalStateException(json, e);
        }
    }

}
