package io.tidemark.destinations.files.internal;

import io.tidemark.sync.spi.DeliveryException;
import org.junit.jupiter.api.Test;

import java.io.IOException;
import java.nio.file.AccessDeniedException;
import java.nio.file.FileSystemException;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Which write failures are fatal. A folder the process may not write to cannot be produced in a test that runs as
 * root (root ignores permissions), so the mapping of the exceptions the JDK throws is checked here.
 */
class JsonLinesFileErrorsTest {

    private static final Path FOLDER = Path.of("/var/export/items");

    @Test
    void what_only_the_operator_can_cure_is_fatal_and_names_the_folder() {
        DeliveryException denied = FileErrors.of(new AccessDeniedException("/var/export/items/.x.tmp"), FOLDER,
                "files", "page 1/1");
        assertThat(denied.isRetryable()).isFalse();
        assertThat(denied.getMessage()).contains("/var/export/items").contains("permission denied");

        assertThat(FileErrors.of(new NoSuchFileException("/var/export/items/.x.tmp"), FOLDER, "files", "p")
                .isRetryable()).isFalse();
        assertThat(FileErrors.of(new FileSystemException("/var/export/items/.x.tmp", null, "Read-only file system"),
                FOLDER, "files", "p").isRetryable()).isFalse();
    }

    @Test
    void a_full_disk_or_another_io_failure_is_retryable() {
        DeliveryException full = FileErrors.of(new FileSystemException("/var/export/items/.x.tmp", null,
                "No space left on device"), FOLDER, "files", "page 2/3 of Items:1-2");
        assertThat(full.isRetryable()).isTrue();
        assertThat(full.getMessage()).contains("could not write page 2/3 of Items:1-2 into /var/export/items");
        assertThat(FileErrors.of(new IOException("Stale file handle"), FOLDER, "files", "p").isRetryable()).isTrue();
    }
}
