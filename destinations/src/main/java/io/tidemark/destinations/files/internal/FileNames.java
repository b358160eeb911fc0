package io.tidemark.destinations.files.internal;

import io.tidemark.sync.ChangeBatch;

import java.nio.charset.StandardCharsets;
import java.security.SecureRandom;
import java.time.Instant;
import java.time.ZoneOffset;
import java.time.format.DateTimeFormatter;
import java.util.Optional;
import java.util.concurrent.atomic.AtomicLong;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * The names of the files a destination writes, and the one pattern that recognises them again for retention:
 *
 * <pre>
 * &lt;prefix&gt;.&lt;object&gt;.v&lt;toVersion, 19 digits&gt;.p&lt;page, 6 digits&gt;.f&lt;part, 4 digits&gt;.&lt;idempotencyKey&gt;.&lt;UTC yyyyMMdd'T'HHmmssSSS'Z'&gt;.&lt;sequence&gt;-&lt;16 hex&gt;.jsonl[.gz]
 * </pre>
 *
 * <p>Why each part: the object, version, page and part make {@code ls} list an object's files in delivery order;
 * the idempotency key says which page a file holds; the timestamp is what retention ages by (read from the name,
 * so it follows the destination's clock and not a file system's); the sequence (per JVM, monotonic) and 64 random
 * bits make two files of the same page distinct even in the same millisecond and across processes writing to one
 * folder, so a rename can never replace another file.
 *
 * <p>A file being written is {@code .<final name>.tmp}: hidden, and never matched by the pattern, so a cleanup
 * cannot touch a write in progress (its own or another process's).
 */
public final class FileNames {

    /** What a prefix may be: it starts every name the destination owns, so no dot (the separator) and no path. */
    public static final Pattern PREFIX = Pattern.compile("[A-Za-z0-9][A-Za-z0-9_-]{0,63}");

    private static final int MAX_OBJECT_CHARS = 64;
    private static final DateTimeFormatter STAMP =
            DateTimeFormatter.ofPattern("yyyyMMdd'T'HHmmssSSS'Z'").withZone(ZoneOffset.UTC);
    private static final AtomicLong SEQUENCE = new AtomicLong();
    private static final SecureRandom RANDOM = new SecureRandom();

    private final String prefix;
    private final String extension;
    private final Pattern owned;

    public FileNames(String prefix, boolean gzip) {
        this.prefix = prefix;
        this.extension = gzip ? ".jsonl.gz" : ".jsonl";
        this.owned = Pattern.compile(Pattern.quote(prefix)
                + "\\.[A-Za-z0-9_~-]{1," + MAX_OBJECT_CHARS + "}\\.v-?\\d{19}\\.p\\d{6,}\\.f\\d{4,}"
                + "\\.tm1-[0-9a-f]{32}\\.(\\d{8}T\\d{9}Z)\\.\\d+-[0-9a-f]{16}\\.jsonl(?:\\.gz)?");
    }

    /** A fresh, unique name for part {@code part} (from 1) of {@code batch}, written at {@code now}. */
    public String next(ChangeBatch batch, int part, Instant now) {
        return prefix + '.' + object(batch.objectName())
                + ".v" + pad(batch.toVersion(), 19)
                + ".p" + pad(batch.pageNumber(), 6)
                + ".f" + pad(part, 4)
                + '.' + batch.idempotencyKey()
                + '.' + STAMP.format(now)
                + '.' + SEQUENCE.incrementAndGet() + '-' + String.format("%016x", RANDOM.nextLong())
                + extension;
    }

    /** The hidden name a file is written under before it is renamed to {@code finalName}. */
    public static String temporary(String finalName) {
        return '.' + finalName + ".tmp";
    }

    /** When the file named {@code fileName} was written, if this destination owns the name; empty otherwise. */
    public Optional<Instant> writtenAt(String fileName) {
        Matcher m = owned.matcher(fileName);
        if (!m.matches()) {
            return Optional.empty();
        }
        return Optional.of(STAMP.parse(m.group(1), Instant::from));
    }

    /**
     * The object's name as a file-name part: ASCII letters, digits, {@code _} and {@code -} kept, every other
     * UTF-8 byte written {@code ~HH}; cut at 64 characters (the idempotency key identifies the page anyway).
     */
    static String object(String objectName) {
        StringBuilder out = new StringBuilder();
        for (byte b : objectName.getBytes(StandardCharsets.UTF_8)) {
            char c = (char) (b & 0xff);
            if (c < 0x80 && (Character.isLetterOrDigit(c) || c == '_' || c == '-')) {
                out.append(c);
            } else {
                out.append('~').append(String.format("%02X", b & 0xff));
            }
        }
        if (out.length() == 0) {
            out.append('_');
        }
        return out.length() <= MAX_OBJECT_CHARS ? out.toString() : out.substring(0, MAX_OBJECT_CHARS);
    }

    private static String pad(long value, int width) {
        String digits = Long.toString(Math.abs(value));
        StringBuilder out = new StringBuilder(width + 1);
        if (value < 0) {
            out.append('-');
        }
        for (int i = digits.length(); i < width; i++) {
            out.append('0');
        }
        return out.append(digits).toString();
    }
}
