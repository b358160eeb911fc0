package io.tidemark.sync.internal.payload;

import com.fasterxml.jackson.core.JsonFactory;
import com.fasterxml.jackson.core.JsonParser;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

import java.io.IOException;
import java.io.Reader;
import java.io.StringReader;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.stream.Stream;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/**
 * The spool hands back exactly the characters it was given, on either side of its boundary between memory and its
 * temporary file: surrogate pairs cut at the boundary, lone surrogates (SQL Server's NVARCHAR can hold them), and a
 * file side many buffers long.
 */
class SpooledPayloadTest {

    private static final String EMOJI = "\uD83D\uDE00"; // U+1F600, one code point, two chars

    @ParameterizedTest(name = "memory limit {0}")
    @ValueSource(ints = {9, 10, 11, 12, 13})
    void a_surrogate_pair_across_the_memory_limit_survives(int memoryLimit) throws IOException {
        String json = "{\"a\":\"" + EMOJI.repeat(20) + "é\"}";
        try (SpooledPayload payload = SpooledPayload.spool(new StringReader(json), memoryLimit)) {
            assertThat(payload.overflowed()).isTrue();
            assertThat(payload.size()).isEqualTo(json.length());
            assertThat(readAll(payload)).isEqualTo(json);
            try (JsonParser p = payload.openParser(new JsonFactory())) {
                p.nextToken();
                p.nextToken();
                p.nextToken();
                assertThat(p.getText()).isEqualTo(EMOJI.repeat(20) + "é");
            }
        }
    }

    @Test
    void a_reader_that_hands_out_one_char_at_a_time_is_spooled_whole() throws IOException {
        String json = "[\"" + EMOJI + "x" + EMOJI + "\"]";
        Reader oneByOne = new StringReader(json) {
            @Override
            public int read(char[] cbuf, int off, int len) throws IOException {
                return super.read(cbuf, off, Math.min(len, 1));
            }
        };
        try (SpooledPayload payload = SpooledPayload.spool(oneByOne, 3)) {
            assertThat(readAll(payload)).isEqualTo(json);
        }
    }

    @ParameterizedTest(name = "memory limit {0}")
    @ValueSource(ints = {1, 4, 5, 6, 1000})
    void lone_surrogates_survive_in_memory_and_in_the_file(int memoryLimit) throws IOException {
        String value = "a\uD83Db\uDE00c\uDE00\uD83D";
        String json = "{\"a\":\"" + value + "\"}";
        try (SpooledPayload payload = SpooledPayload.spool(new StringReader(json), memoryLimit)) {
            assertThat(payload.overflowed()).isEqualTo(memoryLimit < json.length());
            assertThat(readAll(payload)).isEqualTo(json);
            try (JsonParser p = payload.openParser(new JsonFactory())) {
                p.nextToken();
                p.nextToken();
                p.nextToken();
                assertThat(p.getText()).isEqualTo(value);
            }
        }
    }

    @Test
    void a_file_side_of_many_buffers_reads_back_whole() throws IOException {
        StringBuilder sb = new StringBuilder("[");
        for (int i = 0; i < 60_000; i++) {
            sb.append(i == 0 ? "" : ",").append("\"").append(i).append((char) ('\u00e0' + i % 20)).append(EMOJI)
                    .append(i % 7 == 0 ? "\uDC00" : "").append("\"");
        }
        String json = sb.append("]").toString();
        try (SpooledPayload payload = SpooledPayload.spool(new StringReader(json), 100_000)) {
            assertThat(payload.overflowed()).isTrue();
            assertThat(payload.size()).isEqualTo(json.length());
            assertThat(readAll(payload)).isEqualTo(json);
            assertThat(readAll(payload)).as("a second read, as the engine's delivery pass makes").isEqualTo(json);
        }
    }

    @Test
    void a_stream_that_fails_after_the_spool_reached_its_file_leaves_no_file_behind() throws IOException {
        Path tmp = Path.of(System.getProperty("java.io.tmpdir"));
        List<Path> before = spoolFiles(tmp);
        Reader failing = new Reader() {
            private int served;

            @Override
            public int read(char[] cbuf, int off, int len) throws IOException {
                if (served >= 50_000) {
                    throw new IOException("connection reset");
                }
                int n = Math.min(len, 50_000 - served);
                java.util.Arrays.fill(cbuf, off, off + n, 'x');
                served += n;
                return n;
            }

            @Override
            public void close() {
            }
        };

        assertThatThrownBy(() -> SpooledPayload.spool(failing, 1_000)).hasMessage("connection reset");
        assertThat(spoolFiles(tmp)).isEqualTo(before);
    }

    @Test
    void closing_the_payload_deletes_its_file() throws IOException {
        Path tmp = Path.of(System.getProperty("java.io.tmpdir"));
        List<Path> before = spoolFiles(tmp);
        SpooledPayload payload = SpooledPayload.spool(new StringReader("[\"" + "y".repeat(5_000) + "\"]"), 100);
        assertThat(payload.overflowed()).isTrue();
        assertThat(spoolFiles(tmp)).hasSize(before.size() + 1);
        payload.close();
        assertThat(spoolFiles(tmp)).isEqualTo(before);
    }

    private static List<Path> spoolFiles(Path dir) throws IOException {
        try (Stream<Path> files = Files.list(dir)) {
            return files.filter(f -> f.getFileName().toString().startsWith("tidemark-response-")).sorted().toList();
        }
    }

    private static String readAll(SpooledPayload payload) throws IOException {
        StringBuilder sb = new StringBuilder();
        try (JsonParser p = payload.openParser(new JsonFactory())) {
            Reader reader = (Reader) p.getInputSource();
            char[] buffer = new char[7];
            int n;
            while ((n = reader.read(buffer)) != -1) {
                sb.append(buffer, 0, n);
            }
        }
        return sb.toString();
    }
}
