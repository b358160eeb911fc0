package io.tidemark.sqlserver.internal;

import java.sql.SQLException;
import java.util.List;

/**
 * What a procedure call returned, one result set at a time (update counts are skipped). The seam between JDBC
 * ({@link JdbcCallResults}) and {@link ResponseReader}, so that how results are judged can be tested without a
 * server.
 */
public interface CallResults {

    /**
     * Moves to the next result set, skipping update counts and discarding what is left of the current one.
     * False when no result set is left. Errors the procedure raised after its last result set surface here.
     */
    boolean nextResultSet() throws SQLException;

    /** The current result set's columns. */
    List<ResultColumn> columns() throws SQLException;

    /** The current result set's rows, first column, as chunks. */
    ChunkSource chunks() throws SQLException;

    /** A result set column: its name and the server's type name. */
    record ResultColumn(String name, String typeName) {

        @Override
        public String toString() {
            return (name == null || name.isEmpty() ? "(no name)" : name) + " " + typeName;
        }
    }
}
