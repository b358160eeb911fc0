package io.tidemark.destinations.files;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.JsonNodeFactory;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.tidemark.sync.Change;
import io.tidemark.sync.ChangeBatch;
import io.tidemark.sync.ErrorCode;
import io.tidemark.sync.Operation;
import io.tidemark.sync.SyncType;
import io.tidemark.sync.TidemarkException;
import io.tidemark.sync.spi.DeliveryException;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.io.IOException;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Clock;
import java.time.Instant;
import java.time.ZoneOffset;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import java.util.concurrent.Callable;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.stream.Stream;
import java.util.zip.GZIPInputStream;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

class JsonLinesFileDestinationTest {

    private static final ObjectMapper JSON = new ObjectMapper();
    private static final Clock FIXED = Clock.fixed(Instant.parse("2026-12-01T10:15:30.123Z"), ZoneOffset.UTC);

    @TempDir
    Path folder;

    @Test
    void each_change_is_one_line_with_the_envelope_fields_and_the_change_as_returned() throws Exception {
        JsonLinesFileDestination files = JsonLinesFileDestination.builder(folder).clock(FIXED).build();
        ChangeBatch page = Pages.page("dbo.Items", 10, 20, 2, 3, 1, 3);

        files.deliver(page);

        List<Path> written = owned();
        assertThat(written).hasSize(1);
        String name = written.get(0).getFileName().toString();
        assertThat(name).startsWith("tidemark.dbo~2EItems.v0000000000000000020.p000002.f0001."
                + page.idempotencyKey() + ".20261201T101530123Z.").endsWith(".jsonl");
        List<String> lines = Files.readAllLines(written.get(0), StandardCharsets.UTF_8);
        assertThat(lines).hasSize(3);
        for (int i = 0; i < lines.size(); i++) {
            JsonNode line = JSON.readTree(lines.get(i));
            assertThat(line.get("object").asText()).isEqualTo("dbo.Items");
            assertThat(line.get("idempotencyKey").asText()).isEqualTo(page.idempotencyKey());
            assertThat(line.get("batchId").asText()).isEqualTo("dbo.Items:10-20");
            assertThat(line.get("fromVersion").asLong()).isEqualTo(10);
            assertThat(line.get("toVersion").asLong()).isEqualTo(20);
            assertThat(line.get("syncType").asText()).isEqualTo("DIFF");
            assertThat(line.get("page").asInt()).isEqualTo(2);
            assertThat(line.get("pageCount").asInt()).isEqualTo(3);
            assertThat(line.get("totalChanges").asLong()).isEqualTo(9);
        }
        // The change exactly as the procedure returned it: 12.50 keeps its trailing zero.
        assertThat(lines.get(0)).endsWith(",\"change\":" + page.changes().get(0).rawJson() + "}");
        assertThat(lines.get(0)).contains("\"price\":12.50");
        assertThat(temporaries()).as("no temporary file is left behind").isEmpty();
    }

    @Test
    void a_change_whose_json_spans_lines_still_makes_one_line() throws Exception {
        JsonLinesFileDestination files = JsonLinesFileDestination.builder(folder).build();
        String pretty = "{\n  \"$operation\": \"I\",\r\n  \"id\": 1,\n  \"note\": \"two\\nlines\"\n}";
        files.deliver(new ChangeBatch("Items", 0, 1, SyncType.DIFF, 0, List.of(Change.fromRaw(Operation.INSERT,
                null, null, pretty.getBytes(StandardCharsets.UTF_8))), 1, 1, 1));

        List<String> lines = Files.readAllLines(owned().get(0));
        assertThat(lines).hasSize(1);
        assertThat(JSON.readTree(lines.get(0)).get("change").get("note").asText()).isEqualTo("two\nlines");
    }

    @Test
    void two_pages_in_the_same_millisecond_and_the_same_page_twice_never_share_a_file() throws Exception {
        JsonLinesFileDestination files = JsonLinesFileDestination.builder(folder).clock(FIXED).build();
        ChangeBatch page = Pages.page("Items", 0, 5, 1, 1, 1, 2);

        files.deliver(page);
        files.deliver(page); // a re-delivery: a second file under the same idempotency key
        files.deliver(Pages.page("Items", 5, 9, 1, 1, 3, 2));

        assertThat(owned()).hasSize(3);
        assertThat(lineCount()).isEqualTo(6);
    }

    @Test
    void two_destinations_on_one_folder_writing_the_same_page_at_once_keep_every_file() throws Exception {
        int writers = 8;
        int pagesEach = 25;
        List<JsonLinesFileDestination> destinations = new ArrayList<>();
        for (int i = 0; i < writers; i++) {
            // The same prefix and the same frozen millisecond: only the unique suffix tells the files apart.
            destinations.add(JsonLinesFileDestination.builder(folder).clock(FIXED).build());
        }
        ChangeBatch page = Pages.page("Items", 0, 5, 1, 1, 1, 4);
        CountDownLatch start = new CountDownLatch(1);
        ExecutorService pool = Executors.newFixedThreadPool(writers);
        try {
            List<Future<Object>> done = new ArrayList<>();
            for (JsonLinesFileDestination destination : destinations) {
                done.add(pool.submit((Callable<Object>) () -> {
                    start.await();
                    for (int p = 0; p < pagesEach; p++) {
                        destination.deliver(page);
                    }
                    return null;
                }));
            }
            start.countDown();
            for (Future<Object> f : done) {
                f.get();
            }
        } finally {
            pool.shutdownNow();
        }
        assertThat(owned()).hasSize(writers * pagesEach);
        assertThat(lineCount()).isEqualTo(writers * pagesEach * 4L);
    }

    @Test
    void gzip_files_hold_the_same_lines() throws Exception {
        JsonLinesFileDestination files = JsonLinesFileDestination.builder(folder).gzip(true).build();
        files.deliver(Pages.page("Items", 0, 5, 1, 1, 1, 50));

        Path file = owned().get(0);
        assertThat(file.getFileName().toString()).endsWith(".jsonl.gz");
        try (InputStream in = new GZIPInputStream(Files.newInputStream(file))) {
            String text = new String(in.readAllBytes(), StandardCharsets.UTF_8);
            assertThat(text.lines()).hasSize(50);
            assertThat(JSON.readTree(text.lines().toList().get(49)).get("change").get("id").asInt()).isEqualTo(50);
        }
    }

    @Test
    void rotation_by_lines_splits_a_page_into_whole_files_numbered_in_order() throws Exception {
        JsonLinesFileDestination files = JsonLinesFileDestination.builder(folder).rotateAfterLines(3).build();
        files.deliver(Pages.page("Items", 0, 10, 1, 1, 1, 10));

        List<Path> parts = owned();
        assertThat(parts).extracting(p -> p.getFileName().toString().split("\\.")[4])
                .containsExactly("f0001", "f0002", "f0003", "f0004");
        List<Integer> sizes = new ArrayList<>();
        List<Integer> ids = new ArrayList<>();
        for (Path part : parts) {
            List<String> lines = Files.readAllLines(part);
            sizes.add(lines.size());
            for (String line : lines) {
                ids.add(JSON.readTree(line).get("change").get("id").asInt());
            }
        }
        assertThat(sizes).containsExactly(3, 3, 3, 1);
        assertThat(ids).containsExactly(1, 2, 3, 4, 5, 6, 7, 8, 9, 10);
    }

    @Test
    void rotation_by_size_splits_before_the_limit_and_gives_an_oversized_line_its_own_file() throws Exception {
        ChangeBatch page = Pages.page("Items", 0, 10, 1, 1, 1, 6);
        int lineBytes = Files.readAllBytes(writeOnce(page)).length / 6; // all lines have the same length here
        Path other = Files.createDirectory(folder.resolve("sized"));
        JsonLinesFileDestination files = JsonLinesFileDestination.builder(other)
                .rotateAfterBytes(lineBytes * 2L + lineBytes / 2).build();

        files.deliver(page);

        try (Stream<Path> s = Files.list(other)) {
            List<Path> parts = s.sorted().toList();
            assertThat(parts).hasSize(3);
            for (Path part : parts) {
                assertThat(Files.size(part)).isLessThanOrEqualTo(lineBytes * 2L + lineBytes / 2);
                assertThat(Files.readAllLines(part)).hasSize(2);
            }
        }
        Path tiny = Files.createDirectory(folder.resolve("tiny"));
        JsonLinesFileDestination.builder(tiny).rotateAfterBytes(10).build().deliver(page);
        try (Stream<Path> s = Files.list(tiny)) {
            assertThat(s.count()).as("each line longer than the limit is a file of its own").isEqualTo(6);
        }
    }

    @Test
    void a_page_without_changes_writes_nothing() throws Exception {
        JsonLinesFileDestination files = JsonLinesFileDestination.builder(folder).build();
        files.deliver(Pages.page("Items", 0, 0, 1, 1, 1, 0));
        try (Stream<Path> s = Files.list(folder)) {
            assertThat(s.count()).isZero();
        }
    }

    @Test
    void a_missing_folder_or_a_file_in_its_place_is_fatal_and_named() throws Exception {
        Path missing = folder.resolve("nope");
        assertThatThrownBy(() -> JsonLinesFileDestination.builder(missing).build()
                .deliver(Pages.page("Items", 0, 1, 1, 1, 1, 1)))
                .isInstanceOfSatisfying(DeliveryException.class, e -> {
                    assertThat(e.isRetryable()).isFalse();
                    assertThat(e.code()).isEqualTo(ErrorCode.DESTINATION_FAILED);
                    assertThat(e.getMessage()).contains(missing.toString()).contains("does not exist");
                });
        Path file = Files.writeString(folder.resolve("plain.txt"), "x");
        assertThatThrownBy(() -> JsonLinesFileDestination.builder(file).build()
                .deliver(Pages.page("Items", 0, 1, 1, 1, 1, 1)))
                .isInstanceOfSatisfying(DeliveryException.class, e -> {
                    assertThat(e.isRetryable()).isFalse();
                    assertThat(e.getMessage()).contains(file.toString()).contains("is not a folder");
                });
    }

    @Test
    void a_page_that_fails_half_way_publishes_none_of_its_files() throws Exception {
        List<Change> changes = new ArrayList<>(Pages.page("Items", 0, 9, 1, 1, 1, 4).changes());
        // The fifth change cannot be written (its value fails to serialise), after two parts were completed.
        ObjectNode broken = JsonNodeFactory.instance.objectNode();
        broken.putPOJO("id", new Object() {
            @SuppressWarnings("unused")
            public String getValue() {
                throw new IllegalStateException("boom");
            }
        });
        changes.add(Change.of(Operation.INSERT, 9L, null, broken));
        JsonLinesFileDestination files = JsonLinesFileDestination.builder(folder).rotateAfterLines(2).build();

        assertThatThrownBy(() -> files.deliver(new ChangeBatch("Items", 0, 9, SyncType.DIFF, 0, changes, 1, 1, 5)))
                .hasStackTraceContaining("boom");
        try (Stream<Path> s = Files.list(folder)) {
            assertThat(s.toList()).as("no part published, no temporary file left").isEmpty();
        }
    }

    @Test
    void the_configuration_is_checked_at_build_and_every_problem_listed() {
        assertThatThrownBy(() -> JsonLinesFileDestination.builder(null).prefix("../etc").rotateAfterLines(0)
                .retainFiles(-1).cleanupInterval(null).clock(null).build())
                .isInstanceOfSatisfying(TidemarkException.class, e -> {
                    assertThat(e.code()).isEqualTo(ErrorCode.INVALID_CONFIGURATION);
                    assertThat(e.getMessage()).contains("JsonLinesFileDestination has 6 configuration problems")
                            .contains("folder must not be null").contains("prefix must be")
                            .contains("'../etc'").contains("rotateAfterLines must be at least 1")
                            .contains("retainFiles must be at least 0").contains("cleanupInterval must not be null")
                            .contains("clock must not be null");
                });
        for (String bad : List.of("", "a.b", ".hidden", "-x", "a/b", "x".repeat(65))) {
            assertThatThrownBy(() -> JsonLinesFileDestination.builder(folder).prefix(bad).build())
                    .as(bad).hasMessageContaining("prefix must be");
        }
    }

    private Path writeOnce(ChangeBatch page) throws IOException {
        Path scratch = Files.createDirectory(folder.resolve("scratch"));
        JsonLinesFileDestination.builder(scratch).build().deliver(page);
        try (Stream<Path> s = Files.list(scratch)) {
            return s.findFirst().orElseThrow();
        }
    }

    private List<Path> owned() throws IOException {
        try (Stream<Path> s = Files.list(folder)) {
            return s.filter(p -> p.getFileName().toString().startsWith("tidemark.")).sorted().toList();
        }
    }

    private List<Path> temporaries() throws IOException {
        try (Stream<Path> s = Files.list(folder)) {
            return s.filter(p -> p.getFileName().toString().endsWith(".tmp")).toList();
        }
    }

    private long lineCount() throws IOException {
        long n = 0;
        Set<String> names = new HashSet<>();
        for (Path p : owned()) {
            names.add(p.getFileName().toString());
            n += Files.readAllLines(p).size();
        }
        assertThat(names).hasSize(owned().size());
        return n;
    }
}
