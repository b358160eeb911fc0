package io.tidemark.destinations.files;

import io.tidemark.destinations.files.internal.FileErrors;
import io.tidemark.destinations.files.internal.FileNames;
import io.tidemark.destinations.files.internal.PageWriter;
import io.tidemark.destinations.files.internal.RetentionCleaner;
import io.tidemark.sync.ChangeBatch;
import io.tidemark.sync.internal.config.Checks;
import io.tidemark.sync.spi.Destination;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.io.IOException;
import java.nio.file.Path;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.concurrent.atomic.AtomicReference;

/**
 * Writes each page as JSON lines, one line per change carrying the envelope's fields and the change
 * (destinations/README-files.md):
 *
 * <pre>{@code
 * Destination files = JsonLinesFileDestination.builder(Path.of("/var/export/items"))
 *         .prefix("items-export")
 *         .gzip(true)
 *         .rotateAfterLines(100_000)
 *         .retainFor(Duration.ofDays(7))
 *         .build();
 * }</pre>
 *
 * <p>Each file is written to a hidden temporary file in the same folder, forced to disk and renamed atomically, so
 * a reader sees whole files only. Names are unique (a per-process sequence and 64 random bits), so no two pages,
 * nor two processes on one folder, can overwrite each other. Retention deletes only files whose whole name matches
 * this destination's own pattern (its prefix), directly in the folder.
 *
 * <p>A page offered again is written again, to new files under the same idempotency key: a reader that must see each
 * change once drops lines whose {@code idempotencyKey} it has read before.
 */
public final class JsonLinesFileDestination implements Destination {

    private static final Logger LOG = LoggerFactory.getLogger(JsonLinesFileDestination.class);

    /** The prefix unless one is set; set one per destination when several write to one folder. */
    public static final String DEFAULT_PREFIX = "tidemark";
    /** How often retention runs at most (it lists the folder). */
    public static final Duration DEFAULT_CLEANUP_INTERVAL = Duration.ofMinutes(1);

    private final Path folder;
    private final String prefix;
    private final Clock clock;
    private final PageWriter writer;
    private final RetentionCleaner cleaner;
    private final Duration cleanupInterval;
    private final AtomicReference<Instant> lastCleanup = new AtomicReference<>();

    private JsonLinesFileDestination(Builder b) {
        this.folder = b.folder;
        this.prefix = b.prefix;
        this.clock = b.clock;
        FileNames names = new FileNames(b.prefix, b.gzip);
        this.writer = new PageWriter(b.folder, names, b.gzip, b.maxLines, b.maxBytes, b.fsync);
        this.cleaner = new RetentionCleaner(b.folder, names, b.retainFor, b.retainFiles);
        this.cleanupInterval = b.cleanupInterval;
    }

    public static Builder builder(Path folder) {
        return new Builder(folder);
    }

    @Override
    public void deliver(ChangeBatch batch) {
        FileErrors.requireFolder(folder, toString());
        Instant now = clock.instant();
        try {
            List<Path> files = writer.write(batch, now);
            LOG.debug("{}: page {} of {} written as {}", this, batch.pageNumber(), batch.batchId(), files);
        } catch (IOException e) {
            throw FileErrors.of(e, folder, toString(), "page " + batch.pageNumber() + "/" + batch.pageCount()
                    + " of " + batch.batchId() + " (" + batch.idempotencyKey() + ")");
        }
        cleanIfDue(now);
    }

    /**
     * Runs retention now, whatever the interval, and returns the files it deleted; for an application that
     * prefers to clean on its own schedule.
     */
    public List<Path> cleanUp() {
        Instant now = clock.instant();
        lastCleanup.set(now);
        if (!cleaner.isEnabled()) {
            return List.of();
        }
        try {
            return cleaner.clean(now);
        } catch (IOException e) {
            throw FileErrors.of(e, folder, toString(), "(cleaning up)");
        }
    }

    private void cleanIfDue(Instant now) {
        Instant last = lastCleanup.get();
        if (!cleaner.isEnabled() || last != null && now.isBefore(last.plus(cleanupInterval))
                || !lastCleanup.compareAndSet(last, now)) {
            return;
        }
        try {
            List<Path> deleted = cleaner.clean(now);
            if (!deleted.isEmpty()) {
                LOG.debug("{}: retention deleted {} file(s)", this, deleted.size());
            }
        } catch (IOException e) {
            // The page is written; failing it now would only write it twice. The next cleanup tries again.
            LOG.warn("{}: retention could not list {}: {}", this, folder, e.toString());
        }
    }

    @Override
    public String toString() {
        return "JsonLinesFileDestination[" + folder + ", prefix " + prefix + "]";
    }

    /** Configuration; setters store, {@link #build()} checks everything at once. */
    public static final class Builder {
        private final Path folder;
        private String prefix = DEFAULT_PREFIX;
        private boolean gzip;
        private long maxLines = Long.MAX_VALUE;
        private long maxBytes = Long.MAX_VALUE;
        private Duration retainFor;
        private int retainFiles;
        private Duration cleanupInterval = DEFAULT_CLEANUP_INTERVAL;
        private boolean fsync = true;
        private Clock clock = Clock.systemUTC();

        private Builder(Path folder) {
            this.folder = folder;
        }

        /**
         * Starts every file name this destination writes, and is how retention recognises its own files: letters,
         * digits, {@code _} and {@code -}, up to 64, starting with a letter or digit. Default {@value #DEFAULT_PREFIX}.
         */
        public Builder prefix(String prefix) {
            this.prefix = prefix;
            return this;
        }

        /** Compresses each file with gzip ({@code .jsonl.gz}). Default off. */
        public Builder gzip(boolean gzip) {
            this.gzip = gzip;
            return this;
        }

        /** Starts a new file before one would hold more than {@code lines} lines. Default: no limit. */
        public Builder rotateAfterLines(long lines) {
            this.maxLines = lines;
            return this;
        }

        /**
         * Starts a new file before one would exceed {@code bytes} bytes of JSON lines (counted before compression);
         * a single longer line gets a file of its own. Default: no limit.
         */
        public Builder rotateAfterBytes(long bytes) {
            this.maxBytes = bytes;
            return this;
        }

        /** Deletes this destination's files written longer ago than {@code age}. Default: kept. */
        public Builder retainFor(Duration age) {
            this.retainFor = age;
            return this;
        }

        /** Keeps at most the newest {@code files} of this destination's files; 0 (default) keeps any number. */
        public Builder retainFiles(int files) {
            this.retainFiles = files;
            return this;
        }

        /** Runs retention after a page at most this often. Default one minute; zero runs it after every page. */
        public Builder cleanupInterval(Duration interval) {
            this.cleanupInterval = interval;
            return this;
        }

        /** Forces each file, and the folder after the renames, to disk. Default on; off only for scratch data. */
        public Builder fsync(boolean fsync) {
            this.fsync = fsync;
            return this;
        }

        /** The clock file names are stamped with and retention ages by. */
        public Builder clock(Clock clock) {
            this.clock = clock;
            return this;
        }

        public JsonLinesFileDestination build() {
            Checks checks = Checks.of("JsonLinesFileDestination");
            checks.notNull("folder", folder);
            if (checks.notNull("prefix", prefix)) {
                checks.that(FileNames.PREFIX.matcher(prefix).matches(), "prefix must be 1 to 64 letters, digits,"
                        + " '_' or '-', starting with a letter or digit (it is how retention recognises this"
                        + " destination's files), got '" + prefix + "'");
            }
            checks.atLeast("rotateAfterLines", maxLines, 1);
            checks.atLeast("rotateAfterBytes", maxBytes, 1);
            if (retainFor != null) {
                checks.positive("retainFor", retainFor);
            }
            checks.atLeast("retainFiles", retainFiles, 0);
            if (checks.notNull("cleanupInterval", cleanupInterval)) {
                checks.notNegative("cleanupInterval", cleanupInterval);
            }
            checks.notNull("clock", clock);
            checks.throwIfAny();
            return new JsonLinesFileDestination(this);
        }
    }
}
