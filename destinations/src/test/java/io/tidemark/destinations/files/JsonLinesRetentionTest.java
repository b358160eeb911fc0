package io.tidemark.destinations.files;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.time.ZoneId;
import java.time.ZoneOffset;
import java.util.List;
import java.util.stream.Stream;

import static org.assertj.core.api.Assertions.assertThat;

/** Retention deletes this destination's own old files and nothing else. */
class JsonLinesRetentionTest {

    @TempDir
    Path folder;

    @Test
    void by_age_deletes_only_own_files_older_than_the_limit_and_leaves_everything_else() throws Exception {
        MutableClock clock = new MutableClock(Instant.parse("2026-12-01T00:00:00Z"));
        JsonLinesFileDestination files = JsonLinesFileDestination.builder(folder).prefix("orders")
                .retainFor(Duration.ofHours(1)).cleanupInterval(Duration.ZERO).clock(clock).build();
        files.deliver(Pages.page("Items", 0, 1, 1, 1, 1, 1));
        String first = ownNames().get(0);
        List<Path> foreign = foreignFiles(first);

        clock.now = clock.now.plus(Duration.ofMinutes(59));
        files.deliver(Pages.page("Items", 1, 2, 1, 1, 2, 1));
        assertThat(ownNames()).as("nothing is an hour old yet").hasSize(2);

        clock.now = clock.now.plus(Duration.ofMinutes(2));
        files.deliver(Pages.page("Items", 2, 3, 1, 1, 3, 1));
        assertThat(ownNames()).hasSize(2).doesNotContain(first);
        for (Path f : foreign) {
            assertThat(f).as("foreign " + f.getFileName()).exists();
        }
    }

    @Test
    void by_count_keeps_the_newest_own_files() throws Exception {
        MutableClock clock = new MutableClock(Instant.parse("2026-12-01T00:00:00Z"));
        JsonLinesFileDestination files = JsonLinesFileDestination.builder(folder).prefix("orders")
                .retainFiles(2).cleanupInterval(Duration.ZERO).clock(clock).build();
        for (int i = 0; i < 5; i++) {
            clock.now = clock.now.plusSeconds(1);
            files.deliver(Pages.page("Items", i, i + 1, 1, 1, i + 1, 1));
        }
        List<Path> foreign = foreignFiles(ownNames().get(0));
        files.cleanUp();

        List<String> kept = ownNames();
        assertThat(kept).hasSize(2);
        assertThat(kept).allMatch(n -> n.contains(".v0000000000000000004.") || n.contains(".v0000000000000000005."));
        for (Path f : foreign) {
            assertThat(f).as("foreign " + f.getFileName()).exists();
        }
    }

    @Test
    void the_interval_limits_how_often_the_folder_is_listed() throws Exception {
        MutableClock clock = new MutableClock(Instant.parse("2026-12-01T00:00:00Z"));
        JsonLinesFileDestination files = JsonLinesFileDestination.builder(folder).retainFiles(1)
                .cleanupInterval(Duration.ofMinutes(1)).clock(clock).build();
        files.deliver(Pages.page("Items", 0, 1, 1, 1, 1, 1)); // first page: cleans (nothing to delete)
        files.deliver(Pages.page("Items", 1, 2, 1, 1, 2, 1));
        files.deliver(Pages.page("Items", 2, 3, 1, 1, 3, 1));
        assertThat(ownNames("tidemark")).as("not due yet").hasSize(3);
        clock.now = clock.now.plus(Duration.ofMinutes(1));
        files.deliver(Pages.page("Items", 3, 4, 1, 1, 4, 1));
        assertThat(ownNames("tidemark")).hasSize(1);
    }

    /**
     * Everything retention must never touch, all made to look as old and as numerous as possible: another prefix,
     * a prefix that merely starts the same, an unrelated file, a sub-folder holding files with our own names (and
     * a sub-folder named like one of our files), a symbolic link with our name, and a hidden temporary file of a
     * write in progress.
     */
    private List<Path> foreignFiles(String ownName) throws Exception {
        String old = ownName.replaceFirst("\\.\\d{8}T\\d{9}Z\\.", ".20000101T000000000Z.");
        Path sub = Files.createDirectory(folder.resolve("archive"));
        Path target = Files.writeString(folder.resolve("target.txt"), "x");
        return List.of(
                Files.writeString(folder.resolve(old.replaceFirst("^orders", "invoices")), "{}\n"),
                Files.writeString(folder.resolve(old.replaceFirst("^orders", "orders-eu")), "{}\n"),
                Files.writeString(folder.resolve(old.replaceFirst("^orders", "ORDERS")), "{}\n"),
                Files.writeString(folder.resolve("notes.txt"), "keep me"),
                Files.writeString(folder.resolve(old + ".bak"), "{}\n"),
                Files.writeString(sub.resolve(old), "{}\n"),
                Files.createDirectory(folder.resolve(old.replace(".v0", ".v1"))),
                Files.createSymbolicLink(folder.resolve(old.replace(".v0", ".v2")), target),
                Files.writeString(folder.resolve("." + old + ".tmp"), "{}\n"),
                target);
    }

    private List<String> ownNames() throws Exception {
        return ownNames("orders");
    }

    private List<String> ownNames(String prefix) throws Exception {
        try (Stream<Path> s = Files.list(folder)) {
            return s.map(p -> p.getFileName().toString())
                    .filter(n -> n.startsWith(prefix + ".") && Files.isRegularFile(folder.resolve(n))
                            && !n.contains("20000101T"))
                    .sorted().toList();
        }
    }

    private static final class MutableClock extends Clock {
        volatile Instant now;

        MutableClock(Instant now) {
            this.now = now;
        }

        @Override
        public ZoneId getZone() {
            return ZoneOffset.UTC;
        }

        @Override
        public Clock withZone(ZoneId zone) {
            return this;
        }

        @Override
        public Instant instant() {
            return now;
        }
    }
}
