package io.tidemark.sync.internal.payload;

import com.fasterxml.jackson.core.JsonFactory;
import com.fasterxml.jackson.core.JsonParser;
import io.tidemark.sync.spi.ResponsePayload;

import java.io.Closeable;
import java.io.IOException;
import java.io.Reader;
import java.io.UncheckedIOException;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.ArrayList;
import java.util.List;

/**
 * A streamed response copied once into a spool: up to a memory limit in heap chunks, the rest in a temporary
 * file. The engine needs to read a response twice (check everything, then deliver), and a driver stream can
 * be read only once; spooling keeps memory flat whatever the response size.
 *
 * <p>The file holds the characters as raw UTF-16 code units rather than UTF-8: a charset encoder refuses a lone
 * surrogate, which SQL Server's {@code NVARCHAR} can hold, and the spool must hand back exactly what it was given.
 */
public final class SpooledPayload implements ResponsePayload {

    /** 4 Mi characters (8 MiB of heap) before the spool moves to disk. */
    public static final int DEFAULT_MEMORY_LIMIT_CHARS = 4 * 1024 * 1024;

    private static final int CHUNK = 64 * 1024;
    private static final int TAIL_KEEP = 1024;

    private final List<char[]> chunks;
    private final int lastChunkLength;
    private final Path overflow;
    private final long size;
    private final boolean blank;
    private final String tail;

    private SpooledPayload(List<char[]> chunks, int lastChunkLength, Path overflow, long size, boolean blank,
                           String tail) {
        this.chunks = chunks;
        this.lastChunkLength = lastChunkLength;
        this.overflow = overflow;
        this.size = size;
        this.blank = blank;
        this.tail = tail;
    }

    public static SpooledPayload spool(Reader reader) throws IOException {
        return spool(reader, DEFAULT_MEMORY_LIMIT_CHARS);
    }

    /** Spools {@code reader} to its end and closes it. */
    public static SpooledPayload spool(Reader reader, int memoryLimitChars) throws IOException {
        List<char[]> chunks = new ArrayList<>();
        char[] current = null;
        int currentLength = CHUNK;
        long memoryChars = 0;
        boolean memoryFull = false;
        long size = 0;
        boolean blank = true;
        TailKeeper tail = new TailKeeper(TAIL_KEEP);
        Path overflow = null;
        CharFileWriter overflowWriter = null;
        char[] buffer = new char[CHUNK];
        try (Reader in = reader) {
            int n;
            while ((n = in.read(buffer, 0, buffer.length)) != -1) {
                if (n == 0) {
                    continue;
                }
                size += n;
                if (blank) {
                    blank = isWhitespace(buffer, n);
                }
                tail.append(buffer, n);
                int offset = 0;
                while (offset < n && overflowWriter == null && !memoryFull) {
                    int space = currentLength == CHUNK ? CHUNK : CHUNK - currentLength;
                    int take = (int) Math.min(Math.min(n - offset, space), memoryLimitChars - memoryChars);
                    if (memoryChars + take >= memoryLimitChars) {
                        memoryFull = true;
                    }
                    if (take == 0) {
                        break;
                    }
                    if (currentLength == CHUNK) {
                        current = new char[CHUNK];
                        chunks.add(current);
                        currentLength = 0;
                    }
                    System.arraycopy(buffer, offset, current, currentLength, take);
                    currentLength += take;
                    offset += take;
                    memoryChars += take;
                }
                if (offset < n) {
                    if (overflowWriter == null) {
                        overflow = Files.createTempFile("tidemark-response-", ".json");
                        overflowWriter = new CharFileWriter(overflow);
                    }
                    overflowWriter.write(buffer, offset, n - offset);
                }
            }
            if (overflowWriter != null) {
                // The last bytes reach the file here: a full disk fails now, and the file must go too.
                CharFileWriter written = overflowWriter;
                overflowWriter = null;
                written.close();
            }
        } catch (IOException | RuntimeException e) {
            closeQuietly(overflowWriter);
            deleteQuietly(overflow);
            throw e;
        }
        int lastLength = chunks.isEmpty() ? 0 : currentLength;
        return new SpooledPayload(chunks, lastLength, overflow, size, blank, tail.toString());
    }

    /** Whether part of the response went to a temporary file. */
    public boolean overflowed() {
        return overflow != null;
    }

    @Override
    public JsonParser openParser(JsonFactory factory) throws IOException {
        return factory.createParser(new SpoolReader());
    }

    @Override
    public boolean isBlank() {
        return blank;
    }

    @Override
    public long size() {
        return size;
    }

    @Override
    public String sizeUnit() {
        return "characters";
    }

    @Override
    public String head(int maxChars) {
        StringBuilder sb = new StringBuilder(Math.min(maxChars, (int) Math.min(size, Integer.MAX_VALUE)));
        for (int i = 0; i < chunks.size() && sb.length() < maxChars; i++) {
            int length = i == chunks.size() - 1 ? lastChunkLength : CHUNK;
            sb.append(chunks.get(i), 0, Math.min(length, maxChars - sb.length()));
        }
        return sb.toString();
    }

    @Override
    public String tail(int maxChars) {
        return tail.substring(Math.max(0, tail.length() - maxChars));
    }

    @Override
    public void close() {
        deleteQuietly(overflow);
    }

    private static boolean isWhitespace(char[] buffer, int n) {
        for (int i = 0; i < n; i++) {
            char c = buffer[i];
            if (c != ' ' && c != '\t' && c != '\n' && c != '\r') {
                return false;
            }
        }
        return true;
    }

    private static void closeQuietly(Closeable writer) {
        if (writer != null) {
            try {
                writer.close();
            } catch (IOException ignored) {
                // The spool is being thrown away; the original failure is what matters.
            }
        }
    }

    private static void deleteQuietly(Path path) {
        if (path != null) {
            try {
                Files.deleteIfExists(path);
            } catch (IOException e) {
                throw new UncheckedIOException("Could not delete spooled response " + path, e);
            }
        }
    }

    /** Reads the memory chunks, then the overflow file. */
    private final class SpoolReader extends Reader {
        private int chunk;
        private int position;
        private CharFileReader file;

        @Override
        public int read(char[] cbuf, int off, int len) throws IOException {
            if (len == 0) {
                return 0;
            }
            while (chunk < chunks.size()) {
                int length = chunk == chunks.size() - 1 ? lastChunkLength : CHUNK;
                if (position < length) {
                    int n = Math.min(len, length - position);
                    System.arraycopy(chunks.get(chunk), position, cbuf, off, n);
                    position += n;
                    return n;
                }
                chunk++;
                position = 0;
            }
            if (overflow == null) {
                return -1;
            }
            if (file == null) {
                file = new CharFileReader(overflow);
            }
            return file.read(cbuf, off, len);
        }

        @Override
        public void close() throws IOException {
            if (file != null) {
                file.close();
            }
        }
    }

    /** Writes characters to a file as big-endian UTF-16 code units, two bytes each, with no charset encoder. */
    private static final class CharFileWriter implements Closeable {
        private final FileChannel channel;
        private final ByteBuffer bytes = ByteBuffer.allocate(CHUNK * 2);

        CharFileWriter(Path file) throws IOException {
            channel = FileChannel.open(file, StandardOpenOption.WRITE, StandardOpenOption.TRUNCATE_EXISTING);
        }

        void write(char[] source, int offset, int length) throws IOException {
            while (length > 0) {
                int n = Math.min(length, bytes.remaining() / 2);
                bytes.asCharBuffer().put(source, offset, n);
                bytes.position(bytes.position() + 2 * n);
                offset += n;
                length -= n;
                if (bytes.remaining() < 2) {
                    flush();
                }
            }
        }

        private void flush() throws IOException {
            bytes.flip();
            while (bytes.hasRemaining()) {
                channel.write(bytes);
            }
            bytes.clear();
        }

        @Override
        public void close() throws IOException {
            try (channel) {
                flush();
            }
        }
    }

    /** Reads back what {@link CharFileWriter} wrote. */
    private static final class CharFileReader implements Closeable {
        private final FileChannel channel;
        private final ByteBuffer bytes = ByteBuffer.allocate(CHUNK * 2).flip();

        CharFileReader(Path file) throws IOException {
            channel = FileChannel.open(file, StandardOpenOption.READ);
        }

        int read(char[] target, int offset, int length) throws IOException {
            if (bytes.remaining() < 2) {
                bytes.compact();
                // A read may end between the two bytes of a code unit: keep reading until one is whole.
                while (bytes.position() < 2 && channel.read(bytes) != -1) {
                    // read again
                }
                bytes.flip();
                if (bytes.remaining() < 2) {
                    if (bytes.hasRemaining()) {
                        throw new IOException("spooled response file ends inside a character");
                    }
                    return -1;
                }
            }
            int n = Math.min(length, bytes.remaining() / 2);
            bytes.asCharBuffer().get(target, offset, n);
            bytes.position(bytes.position() + 2 * n);
            return n;
        }

        @Override
        public void close() throws IOException {
            channel.close();
        }
    }

    /** Keeps the last characters of a stream in a ring. */
    private static final class TailKeeper {
        private final char[] ring;
        private long written;

        TailKeeper(int capacity) {
            this.ring = new char[capacity];
        }

        void append(char[] buffer, int n) {
            int from = Math.max(0, n - ring.length);
            for (int i = from; i < n; i++) {
                ring[(int) (written++ % ring.length)] = buffer[i];
            }
        }

        @Override
        public String toString() {
            int length = (int) Math.min(written, ring.length);
            StringBuilder sb = new StringBuilder(length);
            long start = written - length;
            for (long i = start; i < written; i++) {
                sb.append(ring[(int) (i % ring.length)]);
            }
            return sb.toString();
        }
    }
}
