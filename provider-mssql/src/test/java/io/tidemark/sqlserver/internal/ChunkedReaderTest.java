package io.tidemark.sqlserver.internal;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.tidemark.sync.spi.ResponsePayload;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

import java.io.IOException;
import java.io.Reader;
import java.sql.SQLException;
import java.util.ArrayList;
import java.util.List;
import java.util.Random;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/**
 * Reassembly of a document SQL Server split across rows, fed through the {@link ChunkSource} seam: any cut, any
 * chunk size, NULL and empty rows. The 50 MB case with its memory figures is {@link LargeDocumentReassemblyTest}.
 */
class ChunkedReaderTest {

    private static final ObjectMapper JSON = new ObjectMapper();

    /** A document with everything a cut can fall into: strings, escapes, \\u escapes, non-ASCII, surrogate pairs. */
    static final String DOCUMENT = "{\"Metadata\":{\"Sync\":{\"Version\":42,\"Type\":\"Diff\",\"ReasonCode\":0}},"
            + "\"Data\":[{\"$operation\":\"U\",\"$version\":41,\"Id\":7,"
            + "\"Text\":\"say \\\"hi\\\" \\\\ tab\\t line\\n \\u00e9\\u65e5 é ü 日本語 😀🎉 \\ud83d\\ude00 end\","
            + "\"$changed\":[\"Text\"]},"
            + "{\"$operation\":\"D\",\"$version\":42,\"Id\":8}]}";

    @Test
    void reads_the_chunks_in_order_as_one_stream() throws IOException {
        ChunkedReader reader = new ChunkedReader(Chunks.of("{\"Data\":[", "1,2", ",3]}"));
        assertThat(Chunks.readAll(reader, 64)).isEqualTo("{\"Data\":[1,2,3]}");
        assertThat(reader.chunks()).isEqualTo(3);
        assertThat(reader.characters()).isEqualTo(16);
    }

    @Test
    void null_and_empty_chunks_are_skipped_and_counted() throws IOException {
        ChunkedReader reader = new ChunkedReader(Chunks.of(null, "{\"a\"", "", null, null, ":1", "", "}", null));
        assertThat(Chunks.readAll(reader, 3)).isEqualTo("{\"a\":1}");
        assertThat(reader.chunks()).isEqualTo(9);
        assertThat(reader.nullChunks()).isEqualTo(4);
        assertThat(reader.emptyChunks()).isEqualTo(2);
    }

    @Test
    void no_chunks_or_only_null_chunks_read_as_an_empty_stream() throws IOException {
        assertThat(new ChunkedReader(Chunks.of()).read(new char[8], 0, 8)).isEqualTo(-1);
        ChunkedReader nulls = new ChunkedReader(Chunks.of(null, null, ""));
        assertThat(nulls.read(new char[8], 0, 8)).isEqualTo(-1);
        assertThat(nulls.read(new char[8], 0, 8)).as("stays at the end").isEqualTo(-1);
        assertThat(nulls.nullChunks()).isEqualTo(2);
    }

    @Test
    void a_zero_length_read_reads_nothing() throws IOException {
        ChunkedReader reader = new ChunkedReader(Chunks.of("abc"));
        assertThat(reader.read(new char[4], 0, 0)).isZero();
        assertThat(reader.chunks()).as("no chunk was touched").isZero();
    }

    @Test
    void every_single_cut_reassembles_exactly() throws IOException {
        JsonNode expected = JSON.readTree(DOCUMENT);
        for (int at = 1; at < DOCUMENT.length(); at++) {
            String text = Chunks.readAll(new ChunkedReader(Chunks.of(Chunks.cut(DOCUMENT, at))), 5);
            assertThat(text).as("cut at %d", at).isEqualTo(DOCUMENT);
        }
        // Every cut lands on some kind of place: a sample of them parses to the same values.
        for (int at : new int[] {DOCUMENT.indexOf("\\\"hi"), DOCUMENT.indexOf("\\\"hi") + 1,
                DOCUMENT.indexOf("\\u00e9") + 3, DOCUMENT.indexOf("😀") + 1, DOCUMENT.indexOf("日本") + 1,
                DOCUMENT.indexOf("\\ud83d") + 6}) {
            assertThat(parse(Chunks.of(Chunks.cut(DOCUMENT, at)))).as("cut at %d", at).isEqualTo(expected);
        }
    }

    @Test
    void a_cut_between_the_halves_of_a_surrogate_pair_keeps_the_pair() throws IOException {
        int high = DOCUMENT.indexOf("😀");
        assertThat(Character.isHighSurrogate(DOCUMENT.charAt(high))).isTrue();
        List<String> chunks = Chunks.cut(DOCUMENT, high + 1);
        assertThat(Character.isHighSurrogate(chunks.get(0).charAt(chunks.get(0).length() - 1))).isTrue();
        assertThat(Character.isLowSurrogate(chunks.get(1).charAt(0))).isTrue();
        JsonNode row = parse(Chunks.of(chunks)).get("Data").get(0);
        assertThat(row.get("Text").asText()).contains("😀🎉").contains("\uD83D\uDE00 end");
    }

    @Test
    void one_character_chunks_and_cuts_inside_every_escape() throws IOException {
        List<String> singles = new ArrayList<>();
        for (int i = 0; i < DOCUMENT.length(); i++) {
            singles.add(DOCUMENT.substring(i, i + 1));
            if (i % 3 == 0) {
                singles.add(null);
            }
            if (i % 5 == 0) {
                singles.add("");
            }
        }
        assertThat(parse(Chunks.of(singles))).isEqualTo(JSON.readTree(DOCUMENT));
    }

    @ParameterizedTest(name = "seed {0}")
    @ValueSource(longs = {1, 2, 3, 42, 2033})
    void random_chunkings_parse_to_the_same_values(long seed) throws IOException {
        Random random = new Random(seed);
        JsonNode expected = JSON.readTree(DOCUMENT);
        for (int round = 0; round < 200; round++) {
            List<String> chunks = new ArrayList<>();
            int at = 0;
            while (at < DOCUMENT.length()) {
                int size = 1 + random.nextInt(Math.min(40, DOCUMENT.length() - at));
                chunks.add(DOCUMENT.substring(at, at + size));
                at += size;
                if (random.nextInt(6) == 0) {
                    chunks.add(random.nextBoolean() ? null : "");
                }
            }
            assertThat(parse(Chunks.of(chunks))).isEqualTo(expected);
        }
    }

    @Test
    void reads_of_any_size_straddle_chunks_correctly() throws IOException {
        for (int buffer = 1; buffer <= 17; buffer++) {
            String text = Chunks.readAll(new ChunkedReader(Chunks.of(Chunks.cut(DOCUMENT, 3, 4, 50, 51, 52, 100))),
                    buffer);
            assertThat(text).as("buffer %d", buffer).isEqualTo(DOCUMENT);
        }
    }

    @Test
    void each_chunk_reader_is_closed_once_read_and_close_closes_the_open_one() throws IOException {
        Chunks source = Chunks.of("ab", "cd", "ef");
        ChunkedReader reader = new ChunkedReader(source);
        char[] buffer = new char[3];
        assertThat(reader.read(buffer, 0, 3)).isEqualTo(2);
        assertThat(reader.read(buffer, 0, 3)).isEqualTo(2);
        assertThat(source.closedReaders()).isEqualTo(1);
        reader.close();
        assertThat(source.closedReaders()).isEqualTo(2);
        assertThat(reader.read(buffer, 0, 3)).as("nothing after close").isEqualTo(-1);
        assertThat(source.openedReaders()).isEqualTo(2);
    }

    @Test
    void a_driver_failure_while_reading_surfaces_with_its_sql_exception() {
        SQLException timeout = ServerErrors.driver("The query has timed out.", "HY008", 0);
        ChunkSource failing = new ChunkSource() {
            private int calls;

            @Override
            public boolean next() throws IOException {
                if (++calls == 3) {
                    throw new ResultSetChunkSource.DriverReadException(timeout);
                }
                return true;
            }

            @Override
            public Reader current() {
                return new java.io.StringReader("[1,");
            }
        };
        assertThatThrownBy(() -> ResponsePayload.spool(new ChunkedReader(failing)))
                .isInstanceOf(ResultSetChunkSource.DriverReadException.class)
                .satisfies(e -> assertThat((Object) ProcedureCall.findSqlException(e)).isSameAs(timeout));
    }

    static JsonNode parse(ChunkSource source) throws IOException {
        try (ResponsePayload payload = ResponsePayload.spool(new ChunkedReader(source))) {
            return JSON.readTree(payload.openParser(JSON.getFactory()));
        }
    }
}
