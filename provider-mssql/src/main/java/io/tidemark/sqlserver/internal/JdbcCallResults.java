package io.tidemark.sqlserver.internal;

import java.sql.ResultSet;
import java.sql.ResultSetMetaData;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.ArrayList;
import java.util.List;

/** {@link CallResults} over an executed JDBC statement. */
public final class JdbcCallResults implements CallResults {

    private final Statement statement;
    private boolean started;
    private final boolean firstIsResultSet;
    private ResultSet current;

    /**
     * @param statement        the statement after {@code execute()}
     * @param firstIsResultSet what {@code execute()} returned
     */
    public JdbcCallResults(Statement statement, boolean firstIsResultSet) {
        this.statement = statement;
        this.firstIsResultSet = firstIsResultSet;
    }

    @Override
    public boolean nextResultSet() throws SQLException {
        boolean isResultSet;
        if (!started) {
            started = true;
            isResultSet = firstIsResultSet;
        } else {
            isResultSet = statement.getMoreResults();
        }
        while (true) {
            if (isResultSet) {
                current = statement.getResultSet();
                return true;
            }
            if (statement.getUpdateCount() == -1) {
                current = null;
                return false;
            }
            isResultSet = statement.getMoreResults();
        }
    }

    @Override
    public List<ResultColumn> columns() throws SQLException {
        ResultSetMetaData meta = current().getMetaData();
        List<ResultColumn> columns = new ArrayList<>(meta.getColumnCount());
        for (int i = 1; i <= meta.getColumnCount(); i++) {
            columns.add(new ResultColumn(meta.getColumnName(i), meta.getColumnTypeName(i)));
        }
        return columns;
    }

    @Override
    public ChunkSource chunks() throws SQLException {
        return new ResultSetChunkSource(current());
    }

    private ResultSet current() throws SQLException {
        if (current == null) {
            throw new SQLException("No current result set");
        }
        return current;
    }
}
