package io.tidemark.sqlserver.internal;

import java.io.IOException;
import java.io.Reader;

/**
 * The rows that together hold one document, one chunk at a time. SQL Server splits the output of
 * {@code FOR JSON} across rows of about 2,000 characters; a procedure that builds its JSON in a variable returns
 * it as a single (possibly very large) row. Either way each row is one chunk.
 *
 * <p>This is the seam between the driver and {@link ChunkedReader}: {@link ResultSetChunkSource} reads a real
 * result set, and tests feed chunks directly (any size, any boundary, NULLs, empties) without a server.
 */
public interface ChunkSource {

    /** Moves to the next chunk. False when there are no more. */
    boolean next() throws IOException;

    /**
     * The current chunk's characters, or {@code null} when the row is SQL NULL. Read it (or not) before the next
     * call to {@link #next()}; it is not valid after that.
     */
    Reader current() throws IOException;
}
