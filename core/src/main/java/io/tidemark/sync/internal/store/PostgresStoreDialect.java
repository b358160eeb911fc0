package io.tidemark.sync.internal.store;

import io.tidemark.sync.internal.jdbc.Jdbc;
import io.tidemark.sync.internal.sql.PgName;
import io.tidemark.sync.internal.sql.SqlTemplate;

import java.sql.Connection;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.Optional;

/** The stores' SQL for PostgreSQL: plain tables, upserts with {@code ON CONFLICT}, no extension. */
final class PostgresStoreDialect extends CommonStoreDialect {

    /** Serialises concurrent first-time creation by several engines (CREATE ... IF NOT EXISTS can still race). */
    private static final long DDL_LOCK_KEY = 0x7469_6465_6D61_726BL; // "tidemark"

    private final PostgresDeadLetterDialect deadLetters;
    private final PostgresLeaseDialect leases;
    private final String selectStateWithPositions;
    private final String advanceInOneStatement;

    PostgresStoreDialect(String schema, String stateTable, String deadLetterTable) {
        super(PgName.of(schema, PgName.checkPart(stateTable, "table")),
                PgName.of(schema, PgName.checkPart(deadLetterTable, "table")),
                PgName.of(schema, PgName.checkPart(stateTable + POSITIONS_SUFFIX, "positions table")));
        this.deadLetters = new PostgresDeadLetterDialect(PgName.of(schema, deadLetterTable));
        this.leases = new PostgresLeaseDialect(
                PgName.of(schema, PgName.checkPart(stateTable + LeaseDialect.LEASES_SUFFIX, "lease table")).quoted(),
                PgName.of(schema, PgName.checkPart(stateTable + LeaseDialect.INSTANCES_SUFFIX, "instance table")).quoted());
        // The engine runs this at the start of every cycle: one statement, without a transaction around it.
        this.selectStateWithPositions = SqlTemplate.of("""
                -- The row of the object and the positions of its destinations in one statement (one snapshot, one
                -- round trip): a row per position, the columns of the object repeated on each; one row without a
                -- position when it has none; no row when there is neither.
                SELECT s.object_name, s.version, s.source_identity, s.paused, s.last_moved_at, s.last_polled_at,
                       s.last_error,
                       p.destination, p.version AS position_version, p.paused AS position_paused
                  FROM (SELECT CAST(:name AS pg_catalog.text) AS object_name) AS o
                  LEFT JOIN {{state}} AS s ON s.object_name = o.object_name
                  LEFT JOIN {{positions}} AS p ON p.object_name = o.object_name
                 WHERE s.object_name IS NOT NULL OR p.object_name IS NOT NULL
                 ORDER BY p.destination""").with("state", state).with("positions", positions).render();
        // The engine runs this after every delivered page: one statement, without a transaction around it.
        this.advanceInOneStatement = SqlTemplate.of("""
                -- The watermark and the positions of the destinations that moved, in one statement: all of it or
                -- nothing. The rows are locked first (the positions in destination order, then the row of the
                -- object: the order of the same write run as a transaction) and checked against what the writer
                -- expects on their newest versions; the updates run only when every one matched. No row back:
                -- nothing was written. (No apostrophe in these comments: the parser of named parameters knows no line
                -- comments and would read one as a quote.)
                WITH moves AS (
                    SELECT m.destination, m.expected, m.version
                      FROM ROWS FROM (pg_catalog.unnest(CAST(:destinations AS pg_catalog.text[])),
                                      pg_catalog.unnest(CAST(:expectedPositions AS pg_catalog.int8[])),
                                      pg_catalog.unnest(CAST(:positionVersions AS pg_catalog.int8[])))
                           AS m(destination, expected, version)),
                held_positions AS (
                    SELECT p.destination
                      FROM {{positions}} AS p
                      JOIN moves AS m ON m.destination = p.destination
                     WHERE p.object_name = :name AND p.version = m.expected AND p.version <= m.version
                     ORDER BY p.destination
                       FOR UPDATE OF p),
                held_state AS (
                    -- Evaluating the count first locks the positions before this row.
                    SELECT s.object_name
                      FROM {{state}} AS s
                     WHERE (SELECT pg_catalog.count(*) FROM held_positions) = :positionCount
                       AND s.object_name = :name AND s.version = :expected AND s.version <= :version
                       AND (s.source_identity IS NULL OR s.source_identity = :source)
                       FOR UPDATE),
                moved AS (
                    UPDATE {{positions}} AS p
                       SET version = m.version,
                           updated_at = :at
                      FROM moves AS m
                     WHERE p.object_name = :name AND p.destination = m.destination AND p.version = m.expected
                       AND EXISTS (SELECT FROM held_state)
                    RETURNING p.destination)
                UPDATE {{state}} AS s
                   SET version = :version,
                       source_identity = :source,
                       last_moved_at = CASE WHEN s.version = :version THEN s.last_moved_at ELSE :at END,
                       last_polled_at = :at,
                       last_error = NULL,
                       updated_at = :at
                 WHERE s.object_name = :name AND s.version = :expected
                   AND EXISTS (SELECT FROM held_state)
                RETURNING (SELECT pg_catalog.count(*) FROM moved) AS moved""")
                .with("state", state).with("positions", positions).render();
    }

    @Override
    public Optional<String> advanceInOneStatement() {
        return Optional.of(advanceInOneStatement);
    }

    @Override
    public Optional<String> selectStateWithPositions() {
        return Optional.of(selectStateWithPositions);
    }

    @Override
    public String databaseIdentity() {
        return """
                -- The database's name on its server, and the server by the time it started (readable by any role;
                -- the same whatever address a connection used, and different for another server).
                SELECT pg_catalog.current_database() || ' on the server started at '
                       || pg_catalog.pg_postmaster_start_time()::text""";
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
                CREATE SCHEMA IF NOT EXISTS {{schema}};

                {{create_state}};

                -- A table created before watermarks recorded their source gains the column here.
                {{add_source}};

                -- An object whose watermark was stored before positions were kept has no rows here:
                -- every destination then stands at the object's watermark until its next delivery.
                {{create_positions}};

                {{letters}}
                {{leases}}""")
                .with("schema", schema)
                .with("create_state", createStateTable())
                .with("add_source", addSourceColumn())
                .with("create_positions", createPositionsTable())
                .with("letters", deadLetters.script())
                .with("leases", leases.script())
                .render();
    }

    private String createStateTable() {
        return SqlTemplate.of("""
                CREATE TABLE IF NOT EXISTS {{state}} (
                    object_name     text        PRIMARY KEY,
                    version         bigint,                          -- NULL until the first successful cycle
                    source_identity text,                            -- the procedure that produced the version
                    paused          boolean     NOT NULL DEFAULT false,
                    last_moved_at   timestamptz,
                    last_polled_at  timestamptz,
                    last_error      text,
                    updated_at      timestamptz NOT NULL DEFAULT now()
                )""").with("state", state).render();
    }

    private String createPositionsTable() {
        return SqlTemplate.of("""
                CREATE TABLE IF NOT EXISTS {{positions}} (
                    object_name text        NOT NULL,
                    destination text        NOT NULL,
                    version     bigint,                 -- every change up to it was accepted; NULL: none yet
                    paused      boolean     NOT NULL DEFAULT false,
                    updated_at  timestamptz NOT NULL DEFAULT now(),
                    PRIMARY KEY (object_name, destination)
                )""").with("positions", positions).render();
    }

    private String addSourceColumn() {
        return SqlTemplate.of("ALTER TABLE {{state}} ADD COLUMN IF NOT EXISTS {{column}} text")
                .with("state", state).with("column", SOURCE_COLUMN).render();
    }

    @Override
    protected void createMissing(Connection c) throws SQLException {
        try (Statement s = c.createStatement()) {
            s.execute("SELECT pg_advisory_xact_lock(" + DDL_LOCK_KEY + ")");
            // Check first: CREATE SCHEMA IF NOT EXISTS still needs the CREATE privilege on the database, which
            // an application role that was handed a ready schema may rightly lack.
            if (!Jdbc.queryBoolean(c, "SELECT to_regnamespace(?) IS NOT NULL", schema)) {
                s.execute("CREATE SCHEMA IF NOT EXISTS " + schema);
            }
            if (!Jdbc.queryBoolean(c, "SELECT to_regclass(?) IS NOT NULL", state)) {
                s.execute(createStateTable());
            }
            // Check first here too: ALTER TABLE needs ownership, and takes an exclusive lock even when the
            // column is there already.
            if (!Jdbc.queryBoolean(c, """
                    SELECT EXISTS (SELECT 1 FROM pg_catalog.pg_attribute
                                    WHERE attrelid = to_regclass(?) AND attname = 'source_identity'
                                      AND NOT attisdropped)""", state)) {
                s.execute(addSourceColumn());
            }
            if (!Jdbc.queryBoolean(c, "SELECT to_regclass(?) IS NOT NULL", positions)) {
                s.execute(createPositionsTable());
            }
            deadLetters.createOrUpgrade(c);
        }
    }

    @Override
    protected void createLeasesMissing(Connection c) throws SQLException {
        try (Statement s = c.createStatement()) {
            s.execute("SELECT pg_advisory_xact_lock(" + DDL_LOCK_KEY + ")");
        }
        leases.createIfMissing(c);
    }

    @Override
    public String advanceFromNothing() {
        return SqlTemplate.of("""
                INSERT INTO {{state}} AS s
                       (object_name, version, source_identity, paused, last_moved_at, last_polled_at, last_error, updated_at)
                VALUES (:name, :version, :source, false, :at, :at, NULL, :at)
                ON CONFLICT (object_name) DO UPDATE
                   SET version = EXCLUDED.version,
                       source_identity = EXCLUDED.source_identity,
                       last_moved_at = EXCLUDED.last_moved_at,
                       last_polled_at = EXCLUDED.last_polled_at,
                       last_error = NULL,
                       updated_at = EXCLUDED.updated_at
                 WHERE s.version IS NULL""").with("state", state).render();
    }

    @Override
    public String recordPoll() {
        return SqlTemplate.of("""
                INSERT INTO {{state}} AS s (object_name, version, paused, last_polled_at, last_error, updated_at)
                VALUES (:name, NULL, false, :at, :error, :at)
                ON CONFLICT (object_name) DO UPDATE
                   SET last_polled_at = EXCLUDED.last_polled_at,
                       last_error = EXCLUDED.last_error,
                       updated_at = EXCLUDED.updated_at""").with("state", state).render();
    }

    @Override
    public String setPaused() {
        return SqlTemplate.of("""
                INSERT INTO {{state}} AS s (object_name, version, paused, updated_at)
                VALUES (:name, NULL, :paused, :at)
                ON CONFLICT (object_name) DO UPDATE
                   SET paused = EXCLUDED.paused,
                       updated_at = EXCLUDED.updated_at""").with("state", state).render();
    }

    @Override
    public String insertPosition() {
        return SqlTemplate.of("""
                INSERT INTO {{positions}} AS p (object_name, destination, version, paused, updated_at)
                VALUES (:name, :destination, :version, false, :at)
                ON CONFLICT (object_name, destination) DO UPDATE
                   SET version = EXCLUDED.version,
                       updated_at = EXCLUDED.updated_at
                 WHERE p.version IS NULL""").with("positions", positions).render();
    }

    @Override
    public String setDestinationPaused() {
        return SqlTemplate.of("""
                INSERT INTO {{positions}} AS p (object_name, destination, version, paused, updated_at)
                VALUES (:name, :destination, NULL, :paused, :at)
                ON CONFLICT (object_name, destination) DO UPDATE
                   SET paused = EXCLUDED.paused,
                       updated_at = EXCLUDED.updated_at""").with("positions", positions).render();
    }
}
