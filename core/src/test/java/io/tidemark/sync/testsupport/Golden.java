package io.tidemark.sync.testsupport;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The one golden-file check of the build: generated text against a reviewed file under the running module's
 * {@code src/test/resources/golden} (tests run in the module's directory). To accept a deliberate change, run the
 * tests with {@code -Dtidemark.golden.update=true}, which rewrites the files, and review the diff before committing.
 *
 * <p>It lives in core's test tree and reaches the other modules as core's {@code test-jar} (a test-scoped
 * dependency), because core's own store tests need it and core cannot depend on the testing module.
 */
public final class Golden {

    /** The one switch that rewrites golden files instead of comparing with them. */
    public static final String UPDATE_PROPERTY = "tidemark.golden.update";

    private static final Path ROOT = Path.of("src", "test", "resources", "golden");

    private Golden() {
    }

    /** Asserts that {@code actual} equals the golden file {@code name} (a path below {@code golden/}), byte for byte. */
    public static void assertMatches(String name, String actual) {
        Path file = ROOT.resolve(name);
        if (Boolean.getBoolean(UPDATE_PROPERTY)) {
            write(file, actual);
            return;
        }
        assertThat(actual).as("generated text against %s; after an intended change run with -D%s=true and review"
                + " the diff", file, UPDATE_PROPERTY).isEqualTo(read(name));
    }

    /** The golden file {@code name}, for tests that also run it. */
    public static String read(String name) {
        Path file = ROOT.resolve(name);
        if (!Files.exists(file)) {
            throw new AssertionError("missing golden file " + file.toAbsolutePath() + "; create it with -D"
                    + UPDATE_PROPERTY + "=true");
        }
        try {
            return Files.readString(file, StandardCharsets.UTF_8);
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    private static void write(Path file, String text) {
        try {
            Files.createDirectories(file.getParent());
            Files.writeString(file, text, StandardCharsets.UTF_8);
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }
}
