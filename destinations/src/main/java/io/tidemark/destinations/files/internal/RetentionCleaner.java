package io.tidemark.destinations.files.internal;

import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.io.IOException;
import java.nio.file.DirectoryStream;
import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.Optional;

/**
 * Deletes the destination's own old files: only regular files directly in the folder whose whole name matches the
 * destination's pattern ({@link FileNames#writtenAt}); never a sub-folder or anything in it, never a symbolic
 * link, never a hidden temporary file (a write in progress), never a file of another prefix or of anyone else.
 * Age is read from the name. A failure to delete is logged and left for the next run: the page that triggered the
 * cleanup was written and must not be refused for it.
 */
public final class RetentionCleaner {

    private static final Logger LOG = LoggerFactory.getLogger(RetentionCleaner.class);

    private final Path folder;
    private final FileNames names;
    private final Duration maxAge;
    private final int maxFiles;

    /**
     * @param maxAge   files written longer ago are deleted; null keeps them whatever their age
     * @param maxFiles at most this many files are kept, the newest; 0 keeps any number
     */
    public RetentionCleaner(Path folder, FileNames names, Duration maxAge, int maxFiles) {
        this.folder = folder;
        this.names = names;
        this.maxAge = maxAge;
        this.maxFiles = maxFiles;
    }

    public boolean isEnabled() {
        return maxAge != null || maxFiles > 0;
    }

    /** Deletes what the rules say, as of {@code now}; returns the files deleted. */
    public List<Path> clean(Instant now) throws IOException {
        List<Owned> owned = new ArrayList<>();
        try (DirectoryStream<Path> entries = Files.newDirectoryStream(folder)) {
            for (Path entry : entries) {
                Optional<Instant> at = names.writtenAt(entry.getFileName().toString());
                if (at.isPresent() && Files.isRegularFile(entry, LinkOption.NOFOLLOW_LINKS)) {
                    owned.add(new Owned(entry, at.get()));
                }
            }
        }
        owned.sort(Comparator.comparing(Owned::at).thenComparing(o -> o.path().getFileName().toString())
                .reversed());
        List<Path> deleted = new ArrayList<>();
        Instant oldest = maxAge == null ? null : now.minus(maxAge);
        for (int i = 0; i < owned.size(); i++) {
            Owned file = owned.get(i);
            boolean tooOld = oldest != null && file.at().isBefore(oldest);
            boolean tooMany = maxFiles > 0 && i >= maxFiles;
            if ((tooOld || tooMany) && delete(file.path())) {
                deleted.add(file.path());
            }
        }
        return deleted;
    }

    private static boolean delete(Path file) {
        try {
            // Another process cleaning the same folder may have been first.
            return Files.deleteIfExists(file);
        } catch (IOException e) {
            LOG.warn("Could not delete {} under the retention rules; the next cleanup tries again: {}", file, e.toString());
            return false;
        }
    }

    private record Owned(Path path, Instant at) {
    }
}
