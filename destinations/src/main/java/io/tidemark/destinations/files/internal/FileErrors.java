package io.tidemark.destinations.files.internal;

import io.tidemark.sync.spi.DeliveryException;

import java.io.IOException;
import java.nio.file.AccessDeniedException;
import java.nio.file.FileSystemException;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.NotDirectoryException;
import java.nio.file.Path;

/**
 * How a failed write is reported to the engine: what only the operator can cure (the folder is missing, is not a
 * folder, may not be written, or sits on a read-only file system) is fatal; anything else (a full disk, an
 * interrupted network share) is retryable, since offering the page again may pass. The message names the path.
 */
public final class FileErrors {

    private FileErrors() {
    }

    /** Fatal unless {@code folder} is an existing folder. */
    public static void requireFolder(Path folder, String destination) {
        if (!Files.isDirectory(folder)) {
            throw DeliveryException.fatal(destination + ": the folder " + folder.toAbsolutePath() + (Files.exists(folder)
                    ? " is not a folder" : " does not exist") + "; create it, or point the destination at another", null);
        }
    }

    /** The delivery failure for {@code e}, raised while writing {@code what} into {@code folder}. */
    public static DeliveryException of(IOException e, Path folder, String destination, String what) {
        String where = destination + ": could not write " + what + " into " + folder.toAbsolutePath() + ": ";
        if (e instanceof AccessDeniedException) {
            return DeliveryException.fatal(where + "permission denied (" + e.getMessage() + "); let the process write"
                    + " to the folder", e);
        }
        if (e instanceof NoSuchFileException || e instanceof NotDirectoryException) {
            return DeliveryException.fatal(where + "the folder or file vanished (" + e.getMessage() + ")", e);
        }
        if (e instanceof FileSystemException && String.valueOf(((FileSystemException) e).getReason())
                .contains("Read-only file system")) {
            return DeliveryException.fatal(where + "the file system is read-only (" + e.getMessage() + ")", e);
        }
        return DeliveryException.retryable(where + e, e);
    }
}
