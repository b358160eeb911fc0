package io.tidemark.sync.internal.payload;

import com.fasterxml.jackson.core.JsonParser;
import com.fasterxml.jackson.databind.JsonNode;
import io.tidemark.sync.internal.Json;
import io.tidemark.sync.spi.ResponsePayload;
import org.junit.jupiter.api.Test;

import java.io.IOException;
import java.io.StringReader;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;

import static org.assertj.core.api.Assertions.assertThat;

class PayloadTest {

    @Test
    void byte_payload_head_and_tail_never_cut_a_character_in_half() {
        String text = "ä€😀".repeat(100);
        ByteArrayPayload payload = new ByteArrayPayload(text.getBytes(StandardCharsets.UTF_8));

        assertThat(payload.head(5)).isEqualTo(text.substring(0, 5));
        assertThat(payload.tail(4)).isEqualTo(text.substring(text.length() - 4));
        assertThat(payload.head(Integer.MAX_VALUE)).isEqualTo(text);
        assertThat(payload.size()).isEqualTo(text.getBytes(StandardCharsets.UTF_8).length);
        assertThat(payload.sizeUnit()).isEqualTo("bytes");
    }

    @Test
    void a_spool_over_its_memory_limit_moves_to_a_file_reads_back_whole_and_deletes_it_on_close() throws IOException {
        StringBuilder text = new StringBuilder("[");
        for (int i = 0; i < 20_000; i++) {
            text.append(i == 0 ? "" : ",").append("{\"n\":").append(i).append(",\"s\":\"é\"}");
        }
        text.append(']');
        JsonNode expected = Json.MAPPER.readTree(text.toString());
        SpooledPayload spool = SpooledPayload.spool(new StringReader(text.toString()), 1000);
        assertThat(spool.overflowed()).isTrue();
        Path file = overflowFile(spool);
        assertThat(file).exists();

        assertThat(readBack(spool)).isEqualTo(expected);
        assertThat(readBack(spool)).isEqualTo(expected);
        assertThat(spool.size()).isEqualTo(text.length());
        assertThat(spool.head(12)).isEqualTo(text.substring(0, 12));
        assertThat(spool.tail(12)).isEqualTo(text.substring(text.length() - 12));
        assertThat(spool.isBlank()).isFalse();

        spool.close();
        assertThat(file).doesNotExist();
    }

    @Test
    void a_small_spool_stays_in_memory() throws IOException {
        try (SpooledPayload spool = SpooledPayload.spool(new StringReader("{\"a\":1}"))) {
            assertThat(spool.overflowed()).isFalse();
            assertThat(readBack(spool)).isEqualTo(Json.MAPPER.readTree("{\"a\":1}"));
        }
        try (SpooledPayload blank = SpooledPayload.spool(new StringReader("   \n"))) {
            assertThat(blank.isBlank()).isTrue();
        }
    }

    @Test
    void strings_report_characters() {
        ResponsePayload payload = ResponsePayload.ofString("{}");
        assertThat(payload.sizeUnit()).isEqualTo("characters");
        assertThat(payload.size()).isEqualTo(2);
    }

    /** Reads the payload back through a parser into a tree, to compare with what was spooled. */
    private static JsonNode readBack(ResponsePayload payload) throws IOException {
        try (JsonParser p = payload.openParser(Json.FACTORY)) {
            return Json.MAPPER.readTree(p);
        }
    }

    private static Path overflowFile(SpooledPayload spool) {
        try {
            java.lang.reflect.Field f = SpooledPayload.class.getDeclaredField("overflow");
            f.setAccessible(true);
            return (Path) f.get(spool);
        } catch (ReflectiveOperationException e) {
            throw new AssertionError(e);
        }
    }
}
