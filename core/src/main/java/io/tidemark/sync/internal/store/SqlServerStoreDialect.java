package io.tidemark.sync.internal.store;

import io.tidemark.sync.internal.sql.SqlServerName;

import java.sql.CallableStatement;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.sql.Types;

/**
 * The stores' SQL for SQL Server: plain tables, upserts with {@code MERGE ... WITH (HOLDLOCK)}.
 *
 * <p>Why {@code HOLDLOCK}: a bare {@code MERGE} takes its key-range locks only for the statement's own read, so
 * two sessions can both find "no row" and both insert, and the second fails on the primary key. With
 * {@code HOLDLOCK} (serializable for that one statement) the second waits and then sees the first's row.
 *
 * <p>Object names are stored with a binary collation: the engine tells objects apart by exact name, and a
 * case-insensitive database collation would otherwise merge {@code Items} and {@code items} into one watermark.
 */
final class SqlServerStoreDialect extends CommonStoreDialect {

    /** Serialises concurrent first-time creation by several engines ({@code IF NOT EXISTS ... CREATE} can race). */
    static final String DDL_LOCK_RESOURCE = "tidemark-store-ddl";
    private static final int DDL_LOCK_TIMEOUT_MS = 30_000;

    private final String schemaName;
    private final String schema;
    private final String lettersTableName;

    SqlServerStoreDialect(String schema, String stateTable, String deadLetterTable) {
        super(SqlServerName.of(schema, SqlServerName.checkPart(stateTable, "table")).quoted(),
                SqlServerName.of(schema, SqlServerName.checkPart(deadLetterTable, "table")).quoted());
        this.schemaName = SqlServerName.checkPart(schema, "schema");
        this.lettersTableName = deadLetterTable;
        this.schema = SqlServerName.quote(schemaName);
    }

    @Override
    public String createScript() {
        return "-- Tidemark store: one row per tracked object (its watermark and bookkeeping),\n"
                + "-- and the pages a destination refused under a dead-letter policy.\n"
                + "-- Safe to run again: each object is created only when it is missing.\n"
                + "IF SCHEMA_ID(" + SqlServerName.literal(schemaName) + ") IS NULL\n"
                + "    EXEC (" + SqlServerName.literal(createSchema()) + ");\n"
                + "GO\n\n"
                + "IF OBJECT_ID(" + SqlServerName.literal(state) + ", N'U') IS NULL\n"
                + createStateTable() + ";\n"
                + "GO\n\n"
                + "IF OBJECT_ID(" + SqlServerName.literal(letters) + ", N'U') IS NULL\n"
                + "BEGIN\n"
                + indent(createLettersTable()) + ";\n"
                + "    " + createLettersIndex() + ";\n"
                + "END;\n"
                + "GO\n";
    }

    /** {@code CREATE SCHEMA} must be alone in its batch, hence {@code EXEC} in the script. */
    private String createSchema() {
        return "CREATE SCHEMA " + schema;
    }

    private String createStateTable() {
        return "CREATE TABLE " + state + " (\n"
                + "    object_name    NVARCHAR(200) COLLATE Latin1_General_100_BIN2 NOT NULL PRIMARY KEY,\n"
                + "    version        BIGINT            NULL,              -- NULL until the first successful cycle\n"
                + "    paused         BIT               NOT NULL DEFAULT 0,\n"
                + "    last_moved_at  DATETIMEOFFSET(6) NULL,\n"
                + "    last_polled_at DATETIMEOFFSET(6) NULL,\n"
                + "    last_error     NVARCHAR(MAX)     NULL,\n"
                + "    updated_at     DATETIMEOFFSET(6) NOT NULL DEFAULT SYSDATETIMEOFFSET()\n"
                + ")";
    }

    private String createLettersTable() {
        return "CREATE TABLE " + letters + " (\n"
                + "    id           BIGINT IDENTITY(1, 1) NOT NULL PRIMARY KEY,\n"
                + "    object_name  NVARCHAR(200) COLLATE Latin1_General_100_BIN2 NOT NULL,\n"
                + "    destination  NVARCHAR(MAX)     NOT NULL,\n"
                + "    batch_id     NVARCHAR(MAX)     NOT NULL,\n"
                + "    page_number  INT               NOT NULL,\n"
                + "    from_version BIGINT            NOT NULL,\n"
                + "    to_version   BIGINT            NOT NULL,\n"
                + "    sync_type    NVARCHAR(10)      NOT NULL,\n"
                + "    reason_code  INT               NOT NULL,\n"
                + "    change_count INT               NOT NULL,\n"
                + "    changes      NVARCHAR(MAX)     NOT NULL CHECK (ISJSON(changes) = 1), -- the page, as returned\n"
                + "    error        NVARCHAR(MAX)     NOT NULL,\n"
                + "    created_at   DATETIMEOFFSET(6) NOT NULL\n"
                + ")";
    }

    private String createLettersIndex() {
        return "CREATE INDEX " + SqlServerName.quote(indexName()) + " ON " + letters + " (object_name, id)";
    }

    private String indexName() {
        String name = lettersTableName + "_object_idx";
        return name.length() <= SqlServerName.MAX_IDENTIFIER_LENGTH ? name
                : name.substring(0, SqlServerName.MAX_IDENTIFIER_LENGTH);
    }

    private static String indent(String sql) {
        return "    " + sql.replace("\n", "\n    ");
    }

    @Override
    protected void createMissing(Connection c) throws SQLException {
        try (Statement s = c.createStatement()) {
            lock(c);
            // Check first: CREATE SCHEMA needs CREATE SCHEMA permission on the database, which an application
            // user that was handed a ready schema may rightly lack.
            if (isNull(c, "SELECT SCHEMA_ID(?)", schemaName)) {
                s.execute(createSchema());
            }
            if (isNull(c, "SELECT OBJECT_ID(?, N'U')", state)) {
                s.execute(createStateTable());
            }
            if (isNull(c, "SELECT OBJECT_ID(?, N'U')", letters)) {
                s.execute(createLettersTable());
                s.execute(createLettersIndex());
            }
        }
    }

    /** Takes an application lock owned by the transaction: released by its commit or rollback. */
    private static void lock(Connection c) throws SQLException {
        try (CallableStatement call = c.prepareCall("{? = call sp_getapplock(?, ?, ?, ?)}")) {
            call.registerOutParameter(1, Types.INTEGER);
            call.setString(2, DDL_LOCK_RESOURCE);
            call.setString(3, "Exclusive");
            call.setString(4, "Transaction");
            call.setInt(5, DDL_LOCK_TIMEOUT_MS);
            call.execute();
            int result = call.getInt(1);
            if (result < 0) {
                // -1 timeout, -2 cancelled, -3 deadlock victim, -999 parameter error.
                throw new SQLException("sp_getapplock('" + DDL_LOCK_RESOURCE + "') returned " + result
                        + ": another session held the store creation lock for more than "
                        + DDL_LOCK_TIMEOUT_MS / 1000 + " s");
            }
        }
    }

    private static boolean isNull(Connection c, String sql, String name) throws SQLException {
        try (PreparedStatement ps = c.prepareStatement(sql)) {
            ps.setNString(1, name);
            try (ResultSet rs = ps.executeQuery()) {
                rs.next();
                rs.getObject(1);
                return rs.wasNull();
            }
        }
    }

    @Override
    public String advanceFromNothing() {
        return "MERGE " + state + " WITH (HOLDLOCK) AS s"
                + " USING (SELECT :name AS object_name) AS src ON s.object_name = src.object_name"
                + " WHEN MATCHED AND s.version IS NULL THEN UPDATE"
                + " SET version = :version, last_moved_at = :at, last_polled_at = :at, last_error = NULL,"
                + " updated_at = :at"
                + " WHEN NOT MATCHED THEN INSERT"
                + " (object_name, version, paused, last_moved_at, last_polled_at, last_error, updated_at)"
                + " VALUES (:name, :version, 0, :at, :at, NULL, :at);";
    }

    @Override
    public String recordPoll() {
        return "MERGE " + state + " WITH (HOLDLOCK) AS s"
                + " USING (SELECT :name AS object_name) AS src ON s.object_name = src.object_name"
                + " WHEN MATCHED THEN UPDATE SET last_polled_at = :at, last_error = :error, updated_at = :at"
                + " WHEN NOT MATCHED THEN INSERT (object_name, version, paused, last_polled_at, last_error, updated_at)"
                + " VALUES (:name, NULL, 0, :at, :error, :at);";
    }

    @Override
    public String setPaused() {
        return "MERGE " + state + " WITH (HOLDLOCK) AS s"
                + " USING (SELECT :name AS object_name) AS src ON s.object_name = src.object_name"
                + " WHEN MATCHED THEN UPDATE SET paused = :paused, updated_at = :at"
                + " WHEN NOT MATCHED THEN INSERT (object_name, version, paused, updated_at)"
                + " VALUES (:name, NULL, :paused, :at);";
    }

    /**
     * A plain {@code INSERT}: the driver appends {@code SELECT SCOPE_IDENTITY()} for the generated id. An
     * {@code OUTPUT} clause would return a second result set that the driver could mistake for the keys.
     */
    @Override
    public String insertDeadLetter() {
        return "INSERT INTO " + letters + " (object_name, destination, batch_id, page_number, from_version, to_version,"
                + " sync_type, reason_code, change_count, changes, error, created_at)"
                + " VALUES (:objectName, :destination, :batchId, :pageNumber, :fromVersion, :toVersion,"
                + " :syncType, :reasonCode, :changeCount, :changes, :error, :createdAt)";
    }

    @Override
    public String selectDeadLetters() {
        return "SELECT id, object_name, destination, batch_id, page_number, from_version, to_version, sync_type,"
                + " reason_code, change_count, changes, error, created_at"
                + " FROM " + letters + " WHERE object_name = :name ORDER BY id";
    }

}
