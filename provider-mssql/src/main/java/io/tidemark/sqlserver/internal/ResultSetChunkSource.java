package io.tidemark.sqlserver.internal;

import java.io.IOException;
import java.io.Reader;
import java.sql.ResultSet;
import java.sql.SQLException;

/**
 * The rows of a result set's first column as chunks. Each value is read with
 * {@link ResultSet#getCharacterStream(int)}: with the driver's adaptive response buffering a large value is
 * streamed from the connection rather than materialised as one {@code String}, so even a procedure that returns
 * its whole document in one {@code NVARCHAR(MAX)} row is read in bounded memory.
 */
public final class ResultSetChunkSource implements ChunkSource {

    private final ResultSet resultSet;

    public ResultSetChunkSource(ResultSet resultSet) {
        this.resultSet = resultSet;
    }

    @Override
    public boolean next() throws IOException {
        try {
            return resultSet.next();
        } catch (SQLException e) {
            throw new DriverReadException(e);
        }
    }

    @Override
    public Reader current() throws IOException {
        try {
            return resultSet.getCharacterStream(1);
        } catch (SQLException e) {
            throw new DriverReadException(e);
        }
    }

    /**
     * A driver failure while the rows were being read (a timeout, a cancel, an error the procedure raised after
     * its first rows), carried through the {@link Reader} API so the caller can map the {@link SQLException}.
     */
    public static final class DriverReadException extends IOException {
        private static final long serialVersionUID = 1L;

        DriverReadException(SQLException cause) {
            super(cause.getMessage(), cause);
        }

        @Override
        public synchronized SQLException getCause() {
            return (SQLException) super.getCause();
        }
    }
}
