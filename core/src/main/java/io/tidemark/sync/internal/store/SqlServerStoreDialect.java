package io.tidemark.sync.internal.store;

import io.tidemark.sync.internal.sql.SqlServerName;
import io.tidemark.sync.internal.sql.SqlTemplate;

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

    /** The source identity is compared exactly, like object names: the engine compares the identity as Java text. */
    private static final String SOURCE_TYPE = "NVARCHAR(1000) COLLATE Latin1_General_100_BIN2";

    private final SqlServerDeadLetterDialect deadLetters;
    private final SqlServerLeaseDialect leases;

    SqlServerStoreDialect(String schema, String stateTable, String deadLetterTable) {
        super(SqlServerName.of(schema, SqlServerName.checkPart(stateTable, "table")),
                SqlServerName.of(schema, SqlServerName.checkPart(deadLetterTable, "table")),
                SqlServerName.of(schema, SqlServerName.checkPart(stateTable + POSITIONS_SUFFIX, "positions table")));
        this.deadLetters = new SqlServerDeadLetterDialect(SqlServerName.of(schema, deadLetterTable));
        this.leases = new SqlServerLeaseDialect(
                SqlServerName.of(schema, SqlServerName.checkPart(stateTable + LeaseDialect.LEASES_SUFFIX, "lease table")).quoted(),
                SqlServerName.of(schema, SqlServerName.checkPart(stateTable + LeaseDialect.INSTANCES_SUFFIX, "instance table")).quoted());
    }

    @Override
    public String databaseIdentity() {
        return """
                -- The database's name on its server, and the server's own name (machine and instance).
                SELECT DB_NAME() + N' on ' + CAST(SERVERPROPERTY('ServerName') AS NVARCHAR(256))""";
    }

    @Override
    public LeaseDialect leases() {
        return leases;
    }

    @Override
    public DeadLetterDialect deadLetters() {
        return deadLetters;
    }

    @Override
    public String createScript() {
        return SqlTemplate.of("""
                -- Tidemark store: one row per tracked object (its watermark and bookkeeping),
                -- one row per destination of an object (its position),
                -- and the pages a destination refused under a dead-letter policy.
                -- Safe to run again: each object is created only when it is missing.
                IF SCHEMA_ID({{schema_literal}}) IS NULL
                    EXEC ({{create_schema_literal}});
                GO

                IF OBJECT_ID({{state_literal}}, N'U') IS NULL
                {{create_state}};
                GO

                -- A table created before watermarks recorded their source gains the column here.
                IF COL_LENGTH({{state_literal}}, N'source_identity') IS NULL
                    {{add_source}};
                GO

                -- An object whose watermark was stored before positions were kept has no rows here:
                -- every destination then stands at the object's watermark until its next delivery.
                IF OBJECT_ID({{positions_literal}}, N'U') IS NULL
                {{create_positions}};
                GO

                {{letters}}
                {{leases}}""")
                .with("schema_literal", SqlServerName.literal(schemaName))
                .with("create_schema_literal", SqlServerName.literal(createSchema()))
                .with("state_literal", SqlServerName.literal(state))
                .with("create_state", createStateTable())
                .with("add_source", addSourceColumn())
                .with("positions_literal", SqlServerName.literal(positions))
                .with("create_positions", createPositionsTable())
                .with("letters", deadLetters.script())
                .with("leases", leases.script())
                .render();
    }

    /** {@code CREATE SCHEMA} must be alone in its batch, hence {@code EXEC} in the script. */
    private String createSchema() {
        return SqlTemplate.of("CREATE SCHEMA {{schema}}").with("schema", schema).render();
    }

    private String createStateTable() {
        return SqlTemplate.of("""
                CREATE TABLE {{state}} (
                    object_name     NVARCHAR(200) COLLATE Latin1_General_100_BIN2 NOT NULL PRIMARY KEY,
                    version         BIGINT            NULL,              -- NULL until the first successful cycle
                    source_identity {{source_type}} NULL, -- the procedure that produced the version
                    paused          BIT               NOT NULL DEFAULT 0,
                    last_moved_at   DATETIMEOFFSET(6) NULL,
                    last_polled_at  DATETIMEOFFSET(6) NULL,
                    last_error      NVARCHAR(MAX)     NULL,
                    updated_at      DATETIMEOFFSET(6) NOT NULL DEFAULT SYSDATETIMEOFFSET()
                )""").with("state", state).with("source_type", SOURCE_TYPE).render();
    }

    private String createPositionsTable() {
        return SqlTemplate.of("""
                CREATE TABLE {{positions}} (
                    object_name NVARCHAR(200) COLLATE Latin1_General_100_BIN2 NOT NULL,
                    destination NVARCHAR(200) COLLATE Latin1_General_100_BIN2 NOT NULL,
                    version     BIGINT            NULL,    -- every change up to it was accepted; NULL: none yet
                    paused      BIT               NOT NULL DEFAULT 0,
                    updated_at  DATETIMEOFFSET(6) NOT NULL DEFAULT SYSDATETIMEOFFSET(),
                    PRIMARY KEY (object_name, destination)
                )""").with("positions", positions).render();
    }

    private String addSourceColumn() {
        return SqlTemplate.of("ALTER TABLE {{state}} ADD {{column}} {{source_type}} NULL")
                .with("state", state).with("column", SOURCE_COLUMN).with("source_type", SOURCE_TYPE).render();
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
            // Checked first: ALTER TABLE needs ALTER permission, which a role handed ready tables may lack.
            if (isNull(c, "SELECT COL_LENGTH(?, N'source_identity')", state)) {
                s.execute(addSourceColumn());
            }
            if (isNull(c, "SELECT OBJECT_ID(?, N'U')", positions)) {
                s.execute(createPositionsTable());
            }
            deadLetters.createOrUpgrade(c);
        }
    }

    @Override
    protected void createLeasesMissing(Connection c) throws SQLException {
        lock(c);
        leases.createIfMissing(c);
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
        return SqlTemplate.of("""
                MERGE {{state}} WITH (HOLDLOCK) AS s
                USING (SELECT :name AS object_name) AS src ON s.object_name = src.object_name
                 WHEN MATCHED AND s.version IS NULL THEN UPDATE
                      SET version = :version,
                          source_identity = :source,
                          last_moved_at = :at,
                          last_polled_at = :at,
                          last_error = NULL,
                          updated_at = :at
                 WHEN NOT MATCHED THEN INSERT
                      (object_name, version, source_identity, paused, last_moved_at, last_polled_at, last_error, updated_at)
                      VALUES (:name, :version, :source, 0, :at, :at, NULL, :at);""").with("state", state).render();
    }

    @Override
    public String recordPoll() {
        return SqlTemplate.of("""
                MERGE {{state}} WITH (HOLDLOCK) AS s
                USING (SELECT :name AS object_name) AS src ON s.object_name = src.object_name
                 WHEN MATCHED THEN UPDATE
                      SET last_polled_at = :at,
                          last_error = :error,
                          updated_at = :at
                 WHEN NOT MATCHED THEN INSERT (object_name, version, paused, last_polled_at, last_error, updated_at)
                      VALUES (:name, NULL, 0, :at, :error, :at);""").with("state", state).render();
    }

    @Override
    public String setPaused() {
        return SqlTemplate.of("""
                MERGE {{state}} WITH (HOLDLOCK) AS s
                USING (SELECT :name AS object_name) AS src ON s.object_name = src.object_name
                 WHEN MATCHED THEN UPDATE
                      SET paused = :paused,
                          updated_at = :at
                 WHEN NOT MATCHED THEN INSERT (object_name, version, paused, updated_at)
                      VALUES (:name, NULL, :paused, :at);""").with("state", state).render();
    }

    @Override
    public String insertPosition() {
        return SqlTemplate.of("""
                MERGE {{positions}} WITH (HOLDLOCK) AS p
                USING (SELECT :name AS object_name, :destination AS destination) AS src
                   ON p.object_name = src.object_name AND p.destination = src.destination
                 WHEN MATCHED AND p.version IS NULL THEN UPDATE
                      SET version = :version,
                          updated_at = :at
                 WHEN NOT MATCHED THEN INSERT (object_name, destination, version, paused, updated_at)
                      VALUES (:name, :destination, :version, 0, :at);""").with("positions", positions).render();
    }

    @Override
    public String setDestinationPaused() {
        return SqlTemplate.of("""
                MERGE {{positions}} WITH (HOLDLOCK) AS p
                USING (SELECT :name AS object_name, :destination AS destination) AS src
                   ON p.object_name = src.object_name AND p.destination = src.destination
                 WHEN MATCHED THEN UPDATE
                      SET paused = :paused,
                          updated_at = :at
                 WHEN NOT MATCHED THEN INSERT (object_name, destination, version, paused, updated_at)
                      VALUES (:name, :destination, NULL, :paused, :at);""").with("positions", positions).render();
    }
}
