package io.tidemark.sync.internal.payload;

import com.fasterxml.jackson.core.JsonFactory;
import com.fasterxml.jackson.core.JsonParser;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

import java.io.IOException;
import java.io.Reader;
import java.io.StringReader;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The spool's boundary between memory and its temporary file, where the file side encodes characters to UTF-8:
 * a surrogate pair cut there must not reach the encoder as two lone halves.
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
