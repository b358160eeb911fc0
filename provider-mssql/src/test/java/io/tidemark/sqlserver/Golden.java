package io.tidemark.sqlserver;

import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Compares generated text with a file under {@code src/test/resources/golden}. To accept a deliberate change, run
 * the test with {@code -Dtidemark.golden.update=true}, which rewrites the file, and review the diff before
 * committing it.
 */
public final class Golden {

    private Golden() {
    }

    public static void assertMatches(String name, String actual) {
        String resource = "golden/" + name;
        if (Boolean.getBoolean("tidemark.golden.update")) {
            write(Path.of("src/test/resources", resource), actual);
            return;
        }
        try (InputStream in = Golden.class.getClassLoader().getResourceAsStream(resource)) {
            assertThat(in).as("golden file %s (create it with -Dtidemark.golden.update=true)", resource).isNotNull();
            String expected = new String(in.readAllBytes(), StandardCharsets.UTF_8);
            assertThat(actual).as("generated text against %s", resource).isEqualTo(expected);
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
