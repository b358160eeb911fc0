package io.tidemark.examples.docs;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.util.List;
import java.util.Set;
import java.util.stream.Collectors;
import java.util.stream.Stream;

/** The repository's own text files, found by walking from the root (build output and VCS folders left out). */
final class RepositoryFiles {

    private static final Set<String> SKIPPED_DIRECTORIES = Set.of("target", ".git", ".idea", ".vscode", ".settings");
    private static final Set<String> TEXT_EXTENSIONS = Set.of("md", "java", "sql", "xml", "properties");

    private RepositoryFiles() {
    }

    /**
     * The repository root: the nearest folder above the working directory that has the parent POM. The system
     * property {@code tidemark.repository.root} points the checks at another checkout (for example an older
     * commit exported with git archive, to see them fail there).
     */
    static Path root() {
        String override = System.getProperty("tidemark.repository.root");
        Path dir = override == null || override.isBlank() ? Paths.get("").toAbsolutePath()
                : Paths.get(override).toAbsolutePath();
        for (Path candidate = dir; candidate != null; candidate = candidate.getParent()) {
            Path pom = candidate.resolve("pom.xml");
            if (Files.isRegularFile(pom) && read(pom).contains("<artifactId>tidemark-parent</artifactId>")
                    && Files.isDirectory(candidate.resolve("core"))) {
                return candidate;
            }
        }
        throw new IllegalStateException("No repository root (a pom.xml of tidemark-parent) above " + dir);
    }

    /** Every md, java, sql, xml and properties file of the repository, outside build output. */
    static List<Path> textFiles(Path root) {
        try (Stream<Path> walk = Files.walk(root)) {
            return walk.filter(Files::isRegularFile)
                    .filter(file -> root.relativize(file).getNameCount() > 0
                            && noSkippedDirectory(root.relativize(file)))
                    .filter(file -> TEXT_EXTENSIONS.contains(extension(file)))
                    .sorted()
                    .collect(Collectors.toList());
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    static String read(Path file) {
        try {
            return Files.readString(file, StandardCharsets.UTF_8);
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    static String extension(Path file) {
        String name = file.getFileName().toString();
        int dot = name.lastIndexOf('.');
        return dot < 0 ? "" : name.substring(dot + 1);
    }

    private static boolean noSkippedDirectory(Path relative) {
        for (int i = 0; i < relative.getNameCount() - 1; i++) {
            if (SKIPPED_DIRECTORIES.contains(relative.getName(i).toString())) {
                return false;
            }
        }
        return true;
    }
}
