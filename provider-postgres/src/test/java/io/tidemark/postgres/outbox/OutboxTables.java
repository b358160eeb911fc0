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

    private OutboxTables(TestDatabase database, String table, PostgresOutbox outbox, CaptureShape shape) {
        this.database = database;
        this.table = table;
        this.outbox = outbox;
        this.shape = shape;
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
     * The captured changes in capture order: full images exactly as stored (and returned); for an outbox of keys,
     * each row as {@code {"$operation", "$version", "$changed" (updates), "key_1", ...}}.
     */
    List<String> capturedText() {
        List<String> changes = new ArrayList<>();
        String change = shape == CaptureShape.KEYS
                ? "(jsonb_strip_nulls(jsonb_build_object('$operation', o.operation, '$version', o.version,"
                        + " '$changed', o.changed))"
                        + " || (to_jsonb(o) - 'version' - 'id' - 'xact_id' - 'operation' - 'changed'))::text"
                : "o.change::text";
        query("SELECT " + change + " FROM " + outbox.outboxTable() + " AS o ORDER BY o.version, o.id",
                rs -> changes.add(rs.getString(1)));
        return changes;
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
