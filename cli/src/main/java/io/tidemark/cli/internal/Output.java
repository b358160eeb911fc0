package io.tidemark.cli.internal;

import java.io.FileDescriptor;
import java.io.FileOutputStream;
import java.io.IOException;
import java.io.OutputStream;
import java.io.PrintStream;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;

/**
 * Where a command writes: scripts and reports to stdout, exactly as the API returns them (UTF-8, no line added),
 * so {@code tidemark ... > file.sql} is what the Java API generates; notes and progress to stderr.
 */
final class Output {

    private static final OutputStream STDOUT = new FileOutputStream(FileDescriptor.out);
    private static final PrintStream STDERR = new PrintStream(new FileOutputStream(FileDescriptor.err), true,
            StandardCharsets.UTF_8);

    private Output() {
    }

    /** Writes {@code text} to stdout byte for byte. */
    static void print(String text) {
        try {
            STDOUT.write(text.getBytes(StandardCharsets.UTF_8));
            STDOUT.flush();
        } catch (IOException e) {
            throw new UncheckedIOException("writing to standard output", e);
        }
    }

    /** A line to stdout. */
    static void println(String line) {
        print(line + System.lineSeparator());
    }

    /** A note to stderr. */
    static void note(String line) {
        STDERR.println(line);
    }

    /** Progress to stderr: on a terminal one line rewritten in place, else one line per report. */
    static void progress(String line, boolean last) {
        if (System.console() != null) {
            STDERR.print("\r" + line + (last ? System.lineSeparator() : ""));
            STDERR.flush();
        } else {
            STDERR.println(line);
        }
    }
}
