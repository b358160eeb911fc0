package io.tidemark.destinations.files.internal;

import io.tidemark.sync.Change;
import io.tidemark.sync.ChangeBatch;

import java.io.BufferedOutputStream;
import java.io.IOException;
import java.io.OutputStream;
import java.nio.channels.Channels;
import java.nio.channels.FileChannel;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.nio.file.StandardOpenOption;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.zip.GZIPOutputStream;

/**
 * Writes one page as one or more files, each whole: every part is written to a hidden temporary file in the target
 * folder and forced to disk, and only when all parts are written are they renamed, in order, with an atomic move,
 * and the folder forced after them. A failure while writing deletes the temporary files, so a reader never sees a
 * partial file and a refused page leaves nothing behind.
 *
 * <p>A part ends before a line that would take it over {@code maxLines} lines or {@code maxBytes} bytes (counted
 * before compression); a single line larger than {@code maxBytes} is a part of its own.
 */
public final class PageWriter {

    private static final int BUFFER = 64 * 1024;

    private final Path folder;
    private final FileNames names;
    private final boolean gzip;
    private final long maxLines;
    private final long maxBytes;
    private final boolean fsync;

    public PageWriter(Path folder, FileNames names, boolean gzip, long maxLines, long maxBytes, boolean fsync) {
        this.folder = folder;
        this.names = names;
        this.gzip = gzip;
        this.maxLines = maxLines;
        this.maxBytes = maxBytes;
        this.fsync = fsync;
    }

    /** Writes {@code batch} and returns the files it published, in order; none for a page without changes. */
    public List<Path> write(ChangeBatch batch, Instant now) throws IOException {
        if (batch.changes().isEmpty()) {
            return List.of();
        }
        LineEncoder encoder = LineEncoder.of(batch);
        List<Path> temporaries = new ArrayList<>();
        List<Path> finals = new ArrayList<>();
        int published = 0;
        try {
            Part part = null;
            for (Change change : batch.changes()) {
                byte[] line = encoder.line(change);
                if (part != null && part.isFullFor(line.length)) {
                    part.finish();
                    part = null;
                }
                if (part == null) {
                    String name = names.next(batch, finals.size() + 1, now);
                    Path temporary = folder.resolve(FileNames.temporary(name));
                    temporaries.add(temporary);
                    finals.add(folder.resolve(name));
                    part = new Part(temporary);
                }
                part.write(line);
            }
            part.finish();
            for (; published < finals.size(); published++) {
                Files.move(temporaries.get(published), finals.get(published), StandardCopyOption.ATOMIC_MOVE);
            }
            if (fsync) {
                forceFolder();
            }
            return List.copyOf(finals);
        } catch (IOException | RuntimeException e) {
            for (int i = published; i < temporaries.size(); i++) {
                deleteQuietly(temporaries.get(i), e);
            }
            throw e;
        }
    }

    /** Forces the folder's entries (the renames) to disk; platforms that cannot open a folder (Windows) skip it. */
    private void forceFolder() throws IOException {
        FileChannel dir;
        try {
            dir = FileChannel.open(folder, StandardOpenOption.READ);
        } catch (IOException | UnsupportedOperationException e) {
            return;
        }
        try (dir) {
            dir.force(true);
        } catch (IOException e) {
            // Some file systems refuse fsync on a directory (EINVAL); the rename itself is atomic either way.
            if (!String.valueOf(e.getMessage()).contains("Invalid argument")) {
                throw e;
            }
        }
    }

    private static void deleteQuietly(Path file, Exception cause) {
        try {
            Files.deleteIfExists(file);
        } catch (IOException e) {
            cause.addSuppressed(e);
        }
    }

    /** One file being written: its channel (to force it), the compressing and buffering streams, and its size. */
    private final class Part {
        private final FileChannel channel;
        private final GZIPOutputStream compressed;
        private final OutputStream out;
        private long lines;
        private long bytes;

        Part(Path temporary) throws IOException {
            channel = FileChannel.open(temporary, StandardOpenOption.CREATE_NEW, StandardOpenOption.WRITE);
            OutputStream sink = Channels.newOutputStream(channel);
            compressed = gzip ? new GZIPOutputStream(sink, BUFFER) : null;
            out = new BufferedOutputStream(gzip ? compressed : sink, BUFFER);
        }

        boolean isFullFor(int lineBytes) {
            return lines + 1 > maxLines || bytes + lineBytes > maxBytes;
        }

        void write(byte[] line) throws IOException {
            out.write(line);
            lines++;
            bytes += line.length;
        }

        void finish() throws IOException {
            try (out) {
                out.flush();
                if (compressed != null) {
                    compressed.finish();
                }
                if (fsync) {
                    channel.force(true);
                }
            }
        }
    }
}
