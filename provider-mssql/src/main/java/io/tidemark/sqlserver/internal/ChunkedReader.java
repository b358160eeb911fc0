package io.tidemark.sqlserver.internal;

import java.io.IOException;
import java.io.Reader;

/**
 * Reads every chunk of a {@link ChunkSource} in order as one character stream, so that the streaming JSON parser
 * sees the document SQL Server split across rows without the document ever being concatenated in memory.
 *
 * <p>Characters pass through unchanged, as UTF-16 code units: a chunk boundary in the middle of a string, an
 * escape sequence or a surrogate pair needs no care, because nothing is decoded or re-encoded per chunk. NULL rows
 * and empty rows carry no characters and are skipped (and counted, for diagnostics).
 *
 * <p>Memory: one chunk's reader at a time, plus whatever the caller's buffer holds.
 */
public final class ChunkedReader extends Reader {

    private final ChunkSource source;
    private Reader chunk;
    private boolean chunkHadCharacters;
    private boolean ended;
    private long chunks;
    private long nullChunks;
    private long emptyChunks;
    private long characters;

    public ChunkedReader(ChunkSource source) {
        this.source = source;
    }

    @Override
    public int read(char[] buffer, int offset, int length) throws IOException {
        if (length == 0) {
            return 0;
        }
        while (!ended) {
            if (chunk == null && !advance()) {
                return -1;
            }
            if (chunk == null) {
                continue; // a NULL row: nothing to read
            }
            int n = chunk.read(buffer, offset, length);
            if (n > 0) {
                chunkHadCharacters = true;
                characters += n;
                return n;
            }
            if (n < 0) {
                finishChunk();
            }
        }
        return -1;
    }

    /** Moves to the next chunk; false at the end of the source. Leaves {@code chunk} null for a NULL row. */
    private boolean advance() throws IOException {
        if (!source.next()) {
            ended = true;
            return false;
        }
        chunks++;
        chunk = source.current();
        chunkHadCharacters = false;
        if (chunk == null) {
            nullChunks++;
        }
        return true;
    }

    private void finishChunk() throws IOException {
        if (!chunkHadCharacters) {
            emptyChunks++;
        }
        Reader done = chunk;
        chunk = null;
        done.close();
    }

    /** Chunks seen so far, NULL and empty ones included. */
    public long chunks() {
        return chunks;
    }

    public long nullChunks() {
        return nullChunks;
    }

    public long emptyChunks() {
        return emptyChunks;
    }

    /** Characters handed out so far. */
    public long characters() {
        return characters;
    }

    /** Closes the current chunk's reader; the source itself belongs to whoever opened it. */
    @Override
    public void close() throws IOException {
        ended = true;
        if (chunk != null) {
            Reader open = chunk;
            chunk = null;
            open.close();
        }
    }
}
