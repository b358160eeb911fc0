package io.tidemark.sync.internal.store;

import io.tidemark.sync.internal.sql.PgName;

import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;

/** The stores' SQL for PostgreSQL: plain tables, upserts with {@code ON CONFLICT}, no extension. */
final class PostgresStoreDialect extends CommonStoreDialect {

    /** Serialises concurrent first-time creation by several engines (CREATE ... IF NOT EXISTS can still race). */
    private static final long DDL_LOCK_KEY = 0x7469_6465_6D61_726BL; // "tidemark"

    private final String schemaName;
    private final String schema;
    private final String lettersTableName;

    PostgresStoreDialect(String schema, String stateTable, String deadLetterTable) {
        super(PgName.of(schema, PgName.checkPart(stateTable, "table")).quoted(),
                PgName.of(schema, PgName.checkPart(deadLetterTable, "table")).quoted());
        this.schemaName = PgName.checkPart(schema, "schema");
        this.lettersTableName = deadLetterTable;
        this.schema = PgName.quote(schemaName);
    }

    @Override
    public String createScript() {
        return "-- Tidemark store: one row per tracked object (its watermark and bookkeeping),\n"
                + "-- and the pages a destination refused under a dead-letter policy.\n"
                + "CREATE SCHEMA IF NOT EXISTS " + schema + ";\n\n"
                + createStateTable() + ";\n\n"
                + createLettersTable() + ";\n\n"
                + createLettersIndex() + ";\n";
    }

    private String createStateTable() {
        return "CREATE TABLE IF NOT EXISTS " + state + " (\n"
                + "    object_name    text        PRIMARY KEY,\n"
                + "    version        bigint,                          -- NULL until the first successful cycle\n"
                + "    paused         boolean     NOT NULL DEFAULT false,\n"
                + "    last_moved_at  timestamptz,\n"
                + "    last_polled_at timestamptz,\n"
                + "    last_error     text,\n"
                + "    updated_at     timestamptz NOT NULL DEFAULT now()\n"
                + ")";
    }

    private String createLettersTable() {
        return "CREATE TABLE IF NOT EXISTS " + letters + " (\n"
                + "    id           bigint      GENERATED ALWAYS AS IDENTITY PRIMARY KEY,\n"
                + "    object_name  text        NOT NULL,\n"
                + "    destination  text        NOT NULL,\n"
                + "    batch_id     text        NOT NULL,\n"
                + "    page_number  integer     NOT NULL,\n"
                + "    from_version bigint      NOT NULL,\n"
                + "    to_version   bigint      NOT NULL,\n"
                + "    sync_type    text        NOT NULL,\n"
                + "    reason_code  integer     NOT NULL,\n"
                + "    change_count integer     NOT NULL,\n"
                + "    changes      json        NOT NULL,            -- the page, as the procedure returned it\n"
                + "    error        text        NOT NULL,\n"
                + "    created_at   timestamptz NOT NULL\n"
                + ")";
    }

    private String createLettersIndex() {
        return "CREATE INDEX IF NOT EXISTS " + PgName.quote(indexName()) + " ON " + letters + " (object_name, id)";
    }

    private String indexName() {
        String name = lettersTableName + "_object_idx";
        return name.length() <= PgName.MAX_IDENTIFIER_BYTES ? name : name.substring(0, PgName.MAX_IDENTIFIER_BYTES);
    }

    @Override
    protected void createMissing(Connection c) throws SQLException {
        try (Statement s = c.createStatement()) {
            s.execute("SELECT pg_advisory_xact_lock(" + DDL_LOCK_KEY + ")");
            // Check first: CREATE SCHEMA IF NOT EXISTS still needs the CREATE privilege on the database, which
            // an application role that was handed a ready schema may rightly lack.
            if (!exists(c, "SELECT to_regnamespace(?) IS NOT NULL", schema)) {
                s.execute("CREATE SCHEMA IF NOT EXISTS " + schema);
            }
            if (!exists(c, "SELECT to_regclass(?) IS NOT NULL", state)) {
                s.execute(createStateTable());
            }
            if (!exists(c, "SELECT to_regclass(?) IS NOT NULL", letters)) {
                s.execute(createLettersTable());
                s.execute(createLettersIndex());
            }
        }
    }

    private static boolean exists(Connection c, String sql, String name) throws SQLException {
        try (PreparedStatement ps = c.prepareStatement(sql)) {
            ps.setString(1, name);
            try (ResultSet rs = ps.executeQuery()) {
                rs.next();
                return rs.getBoolean(1);
            }
        }
    }

    @Override
    public String advanceFromNothing() {
        return "INSERT INTO " + state + " AS s (object_name, version, paused, last_moved_at, last_polled_at, last_error, updated_at)"
                + " VALUES (:name, :version, false, :at, :at, NULL, :at)"
                + " ON CONFLICT (object_name) DO UPDATE"
                + " SET version = EXCLUDED.version, last_moved_at = EXCLUDED.last_moved_at,"
                + " last_polled_at = EXCLUDED.last_polled_at, last_error = NULL, updated_at = EXCLUDED.updated_at"
                + " WHERE s.version IS NULL";
    }

    @Override
    public String recordPoll() {
        return "INSERT INTO " + state + " AS s (object_name, version, paused, last_polled_at, last_error, updated_at)"
                + " VALUES (:name, NULL, false, :at, :error, :at)"
                + " ON CONFLICT (object_name) DO UPDATE"
                + " SET last_polled_at = EXCLUDED.last_polled_at, last_error = EXCLUDED.last_error,"
                + " updated_at = EXCLUDED.updated_at";
    }

    @Override
    public String setPaused() {
        return "INSERT INTO " + state + " AS s (object_name, version, paused, updated_at)"
                + " VALUES (:name, NULL, :paused, :at)"
                + " ON CONFLICT (object_name) DO UPDATE SET paused = EXCLUDED.paused, updated_at = EXCLUDED.updated_at";
    }

    @Override
    public String insertDeadLetter() {
        return "INSERT INTO " + letters + " (object_name, destination, batch_id, page_number, from_version, to_version,"
                + " sync_type, reason_code, change_count, changes, error, created_at)"
                + " VALUES (:objectName, :destination, :batchId, :pageNumber, :fromVersion, :toVersion,"
                + " :syncType, :reasonCode, :changeCount, CAST(:changes AS json), :error, :createdAt)"
                + " RETURNING id";
    }

    @Override
    public String selectDeadLetters() {
        return "SELECT id, object_name, destination, batch_id, page_number, from_version, to_version, sync_type,"
                + " reason_code, change_count, changes::text AS changes, error, created_at"
                + " FROM " + letters + " WHERE object_name = :name ORDER BY id";
    }

}
