package io.tidemark.sync.internal.store;

import io.tidemark.sync.internal.jdbc.Transactions;
import io.tidemark.sync.internal.sql.QualifiedName;
import io.tidemark.sync.internal.sql.SqlTemplate;

import java.sql.Connection;
import java.sql.SQLException;

/**
 * What the store dialects share: the table names, the statements that are plain SQL on every database, and the
 * transaction around first-time creation. Subclasses give the quoted table names and what differs (upserts, DDL, locking).
 */
abstract class CommonStoreDialect implements StoreDialect {

    /** The column that records what produced the stored version; added to tables created before it existed. */
    static final String SOURCE_COLUMN = "source_identity";

    private static final String STATE_COLUMNS =
            "object_name, version, source_identity, paused, last_moved_at, last_polled_at, last_error";

    /** The schema's name as configured (validated), for catalog lookups. */
    protected final String schemaName;
    /** The schema, quoted. */
    protected final String schema;
    /** The watermark table, quoted and schema-qualified. */
    protected final String state;
    /** The destination positions table, quoted and schema-qualified. */
    protected final String positions;

    // Built once: a store reads and advances on every cycle.
    private final String selectState;
    private final String selectAllStates;
    private final String advanceFrom;
    private final String adoptSource;
    private final String reset;
    private final String selectPositions;
    private final String selectAllPositions;
    private final String advancePosition;
    private final String resetPositions;

    /** Takes the tables' names, checked by the subclass's dialect and in the same schema. */
    CommonStoreDialect(QualifiedName stateTable, QualifiedName lettersTable, QualifiedName positionsTable) {
        this.schemaName = stateTable.schema().orElseThrow();
        this.schema = stateTable.quotedSchema().orElseThrow();
        this.state = stateTable.quoted();
        this.positions = positionsTable.quoted();
        this.selectPositions = SqlTemplate.of("""
                SELECT object_name, destination, version, paused
                  FROM {{positions}}
                 WHERE object_name = :name
                 ORDER BY destination""").with("positions", positions).render();
        this.selectAllPositions = SqlTemplate.of("""
                SELECT object_name, destination, version, paused
                  FROM {{positions}}
                 ORDER BY object_name, destination""").with("positions", positions).render();
        this.advancePosition = SqlTemplate.of("""
                UPDATE {{positions}}
                   SET version = :version,
                       updated_at = :at
                 WHERE object_name = :name AND destination = :destination
                   AND version = :expected AND version <= :version""").with("positions", positions).render();
        // Rows are kept for their pause flags; a row without a version reads as "no position".
        this.resetPositions = SqlTemplate.of("""
                UPDATE {{positions}}
                   SET version = NULL,
                       updated_at = :at
                 WHERE object_name = :name""").with("positions", positions).render();
        this.selectState = SqlTemplate.of("""
                SELECT {{columns}}
                  FROM {{state}}
                 WHERE object_name = :name""").with("columns", STATE_COLUMNS).with("state", state).render();
        this.selectAllStates = SqlTemplate.of("""
                SELECT {{columns}}
                  FROM {{state}}
                 ORDER BY object_name""").with("columns", STATE_COLUMNS).with("state", state).render();
        // A version stored without a source (a row from before sources were recorded) adopts this one.
        this.advanceFrom = SqlTemplate.of("""
                UPDATE {{state}}
                   SET version = :version,
                       source_identity = :source,
                       last_moved_at = CASE WHEN version = :version THEN last_moved_at ELSE :at END,
                       last_polled_at = :at,
                       last_error = NULL,
                       updated_at = :at
                 WHERE object_name = :name AND version = :expected AND version <= :version
                   AND (source_identity IS NULL OR source_identity = :source)""").with("state", state).render();
        this.adoptSource = SqlTemplate.of("""
                UPDATE {{state}}
                   SET source_identity = :source,
                       updated_at = :at
                 WHERE object_name = :name AND version IS NOT NULL""").with("state", state).render();
        this.reset = SqlTemplate.of("""
                UPDATE {{state}}
                   SET version = NULL,
                       source_identity = NULL,
                       last_moved_at = :at,
                       last_error = NULL,
                       updated_at = :at
                 WHERE object_name = :name""").with("state", state).render();
    }

    /** Runs {@link #createMissing} in one transaction, where the dialect takes its creation lock. */
    @Override
    public final void createIfMissing(Connection c) throws SQLException {
        Transactions.inTransaction(c, conn -> {
            createMissing(conn);
            return null;
        });
    }

    /** Takes the dialect's creation lock and creates what is missing, inside the caller's transaction. */
    protected abstract void createMissing(Connection c) throws SQLException;

    /** Runs {@link #createLeasesMissing} in one transaction, where the dialect takes its creation lock. */
    @Override
    public final void createLeaseTablesIfMissing(Connection c) throws SQLException {
        Transactions.inTransaction(c, conn -> {
            createLeasesMissing(conn);
            return null;
        });
    }

    /** Takes the dialect's creation lock and creates the missing lease tables, inside the caller's transaction. */
    protected abstract void createLeasesMissing(Connection c) throws SQLException;

    @Override
    public final String selectState() {
        return selectState;
    }

    @Override
    public final String selectAllStates() {
        return selectAllStates;
    }

    @Override
    public final String advanceFrom() {
        return advanceFrom;
    }

    @Override
    public final String adoptSource() {
        return adoptSource;
    }

    @Override
    public final String reset() {
        return reset;
    }

    @Override
    public final String selectPositions() {
        return selectPositions;
    }

    @Override
    public final String selectAllPositions() {
        return selectAllPositions;
    }

    @Override
    public final String advancePosition() {
        return advancePosition;
    }

    @Override
    public final String resetPositions() {
        return resetPositions;
    }
}
