package io.tidemark.cli;

import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Runs the shaded jar the build packaged ({@code java -jar}, as a user does) and collects what it printed. The
 * jar's path comes from failsafe (system property {@code tidemark.cli.jar}).
 */
final class Cli {

    /** What one run printed and returned. */
    record Run(int exit, byte[] stdoutBytes, String stderr) {
        String stdout() {
            return new String(stdoutBytes, StandardCharsets.UTF_8);
        }

        @Override
        public String toString() {
            return "exit " + exit + "\n--- stdout\n" + stdout() + "\n--- stderr\n" + stderr;
        }
    }

    private Cli() {
    }

    static Path jar() {
        String jar = System.getProperty("tidemark.cli.jar");
        assertThat(jar).as("system property tidemark.cli.jar (set by failsafe: run mvn verify)").isNotNull();
        Path path = Path.of(jar);
        assertThat(Files.isRegularFile(path)).as("the shaded jar %s exists", path).isTrue();
        return path;
    }

    static Run run(String... args) {
        return run(Map.of(), args);
    }

    /** Runs with {@code env} added to this JVM's environment (TIDEMARK_PASSWORD removed unless given). */
    static Run run(Map<String, String> env, String... args) {
        List<String> command = new ArrayList<>(List.of(
                Path.of(System.getProperty("java.home"), "bin", "java").toString(), "-Xmx512m",
                // A short-lived command: the quick compiler and the serial collector start fastest.
                "-XX:TieredStopAtLevel=1", "-XX:+UseSerialGC", "-jar",
                jar().toString()));
        command.addAll(List.of(args));
        ProcessBuilder builder = new ProcessBuilder(command);
        builder.environment().remove("TIDEMARK_PASSWORD");
        builder.environment().putAll(env);
        try {
            Process process = builder.start();
            process.getOutputStream().close();
            CompletableFuture<byte[]> out = read(process.getInputStream());
            CompletableFuture<byte[]> err = read(process.getErrorStream());
            if (!process.waitFor(5, TimeUnit.MINUTES)) {
                process.destroyForcibly();
                throw new AssertionError("tidemark " + String.join(" ", args) + " did not end within 5 minutes");
            }
            return new Run(process.exitValue(), out.join(), new String(err.join(), StandardCharsets.UTF_8));
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new AssertionError(e);
        }
    }

    private static CompletableFuture<byte[]> read(InputStream in) {
        return CompletableFuture.supplyAsync(() -> {
            try (in) {
                return in.readAllBytes();
            } catch (IOException e) {
                throw new UncheckedIOException(e);
            }
        });
    }
}
