package io.tidemark.sqlserver.internal;

import java.io.IOException;
import java.io.Reader;
import java.io.StringReader;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Iterator;
import java.util.List;

/** Chunk sources for tests: fixed chunks, a text cut at given places, anything a driver could hand over. */
final class Chunks implements ChunkSource {

    private final Iterator<String> chunks;
    private String current;
    private int closedReaders;
    private final List<Reader> opened = new ArrayList<>();

    private Chunks(List<String> chunks) {
        this.chunks = chunks.iterator();
    }

    /** The chunks as given; a {@code null} element is a SQL NULL row. */
    static Chunks of(String... chunks) {
        return new Chunks(Arrays.asList(chunks));
    }

    static Chunks of(List<String> chunks) {
        return new Chunks(chunks);
    }

    /** {@code text} cut before each of the (ascending) positions. */
    static List<String> cut(String text, int... positions) {
        List<String> parts = new ArrayList<>();
        int from = 0;
        for (int at : positions) {
            parts.add(text.substring(from, at));
            from = at;
        }
        parts.add(text.substring(from));
        return parts;
    }

    @Override
    public boolean next() {
        if (!chunks.hasNext()) {
            return false;
        }
        current = chunks.next();
        return true;
    }

    @Override
    public Reader current() {
        if (current == null) {
            return null;
        }
        Reader reader = new StringReader(current) {
            @Override
            public void close() {
                closedReaders++;
                super.close();
            }
        };
        opened.add(reader);
        return reader;
    }

    int openedReaders() {
        return opened.size();
    }

    int closedReaders() {
        return closedReaders;
    }

    /** Reads a reader to its end with a small buffer, so that reads straddle chunk boundaries. */
    static String readAll(Reader reader, int bufferSize) throws IOException {
        StringBuilder sb = new StringBuilder();
        char[] buffer = new char[bufferSize];
        int n;
        while ((n = reader.read(buffer, 0, buffer.length)) != -1) {
            sb.append(buffer, 0, n);
        }
        return sb.toString();
    }
}
