package io.tidemark.postgres.internal.logical;

import com.fasterxml.jackson.core.JsonFactory;
import com.fasterxml.jackson.core.JsonGenerator;
import org.junit.jupiter.api.Test;

import java.io.IOException;
import java.io.StringWriter;
import java.util.Arrays;
import java.util.List;
import java.util.Map;

import static org.assertj.core.api.Assertions.assertThat;

class TextValuesTest {

    private static final JsonFactory JSON = new JsonFactory();

    /** A catalog as PgTypes reads it: int4[], text[], timestamptz[], a domain over int4, box[], a composite. */
    private static final PgTypes TYPES = new PgTypes(Map.ofEntries(
            Map.entry(23, entry('b', 0, 0, 4, ',')), Map.entry(25, entry('b', 0, 0, -1, ',')),
            Map.entry(1184, entry('b', 0, 0, 8, ',')), Map.entry(1007, entry('b', 0, 23, -1, ',')),
            Map.entry(1009, entry('b', 0, 25, -1, ',')), Map.entry(1185, entry('b', 0, 1184, -1, ',')),
            Map.entry(603, entry('b', 0, 600, 32, ';')), Map.entry(1020, entry('b', 0, 603, -1, ',')),
            Map.entry(90001, entry('d', 23, 0, 4, ',')),
            Map.entry(90002, new PgTypes.Entry('c', 0, 0, -1, ',', List.of("n", "label", "tags", "at"),
                    List.of(90001, 25, 1009, 1184))),
            Map.entry(90003, entry('b', 0, 90002, -1, ','))));

    private static PgTypes.Entry entry(char typtype, int base, int element, int length, char delimiter) {
        return new PgTypes.Entry(typtype, base, element, length, delimiter, List.of(), List.of());
    }

    private static String json(int type, String text) throws IOException {
        StringWriter out = new StringWriter();
        try (JsonGenerator g = JSON.createGenerator(out)) {
            TextValues.write(g, TYPES.resolve(type), text);
        }
        return out.toString();
    }

    @Test
    void scalars_are_typed_as_row_to_json_types_them_and_a_domain_as_its_base_type() throws IOException {
        assertThat(json(23, "7")).isEqualTo("7");
        assertThat(json(90001, "7")).as("a domain over int4").isEqualTo("7");
        assertThat(json(1700, "NaN")).as("JSON has no NaN").isEqualTo("\"NaN\"");
        assertThat(json(1700, "-Infinity")).isEqualTo("\"-Infinity\"");
        assertThat(json(1700, "-1.5")).isEqualTo("-1.5");
        assertThat(json(16, "f")).isEqualTo("false");
        assertThat(json(3802, "{\"k\": [1]}")).isEqualTo("{\"k\": [1]}");
        assertThat(json(25, "a \"b\"")).isEqualTo("\"a \\\"b\\\"\"");
        assertThat(json(25, null)).isEqualTo("null");
    }

    @Test
    void arrays_become_json_arrays_of_typed_elements_in_every_dimension() throws IOException {
        assertThat(json(1007, "{1,NULL,3}")).isEqualTo("[1,null,3]");
        assertThat(json(1007, "{}")).isEqualTo("[]");
        assertThat(json(1007, "{{1,2},{3,4}}")).isEqualTo("[[1,2],[3,4]]");
        assertThat(json(1007, "[0:1]={5,6}")).as("lower bounds are not shown").isEqualTo("[5,6]");
        assertThat(json(1009, "{a,\"b c\",\"NULL\",NULL,\"q\\\"x\\\\y\",\"\"}"))
                .isEqualTo("[\"a\",\"b c\",\"NULL\",null,\"q\\\"x\\\\y\",\"\"]");
        assertThat(json(1185, "{\"2026-12-04 15:23:57.5+00\"}")).isEqualTo("[\"2026-12-04T15:23:57.5+00:00\"]");
        assertThat(json(1020, "{(1,1),(0,0);(2,2),(1,1)}")).as("box[] uses ; between elements")
                .isEqualTo("[\"(1,1),(0,0)\",\"(2,2),(1,1)\"]");
    }

    @Test
    void composites_become_objects_with_their_fields_typed_and_an_empty_field_null() throws IOException {
        assertThat(json(90002, "(7,\"a \"\"b\"\", c\",\"{x,\"\"y z\"\"}\",)"))
                .isEqualTo("{\"n\":7,\"label\":\"a \\\"b\\\", c\",\"tags\":[\"x\",\"y z\"],\"at\":null}");
        assertThat(json(90003, "{\"(1,a,{},\\\"2026-12-04 00:00:00+00\\\")\",NULL}"))
                .as("an array of composites")
                .isEqualTo("[{\"n\":1,\"label\":\"a\",\"tags\":[],\"at\":\"2026-12-04T00:00:00+00:00\"},null]");
    }

    @Test
    void a_text_that_does_not_parse_is_kept_as_a_string() throws IOException {
        assertThat(json(1007, "1 2")).as("int2vector-like text").isEqualTo("\"1 2\"");
        assertThat(json(1007, "{1,2")).isEqualTo("\"{1,2\"");
        assertThat(json(90002, "(1,2)")).as("fewer fields than the type's").isEqualTo("\"(1,2)\"");
        assertThat(TextValues.parseArray("{1,2}x", ',')).isNull();
        assertThat(TextValues.parseComposite("(1,\"a\"x)")).isNull();
    }

    @Test
    void an_unknown_type_is_text_and_a_type_is_resolved_once() {
        assertThat(TYPES.resolve(424242).kind()).isEqualTo(ValueType.Kind.TEXT);
        assertThat(TYPES.resolve(90002)).isSameAs(TYPES.resolve(90002));
        assertThat(PgTypes.BUILT_IN.resolve(1007).kind()).as("without the catalog, an array is text")
                .isEqualTo(ValueType.Kind.TEXT);
        assertThat(Arrays.asList(TYPES.resolve(90002).fieldTypes().get(2).kind(),
                TYPES.resolve(90002).fieldTypes().get(0).kind()))
                .containsExactly(ValueType.Kind.ARRAY, ValueType.Kind.NUMBER);
    }

    @Test
    void timestamps_are_written_in_iso_8601_as_row_to_json_writes_them() {
        assertThat(TextValues.isoTimestamp("2026-12-04 15:23:57.5+00")).isEqualTo("2026-12-04T15:23:57.5+00:00");
        assertThat(TextValues.isoTimestamp("2026-12-04 15:23:57-05")).isEqualTo("2026-12-04T15:23:57-05:00");
        assertThat(TextValues.isoTimestamp("2026-12-04 15:23:57+05:30")).isEqualTo("2026-12-04T15:23:57+05:30");
        assertThat(TextValues.isoTimestamp("2026-12-04 15:23:57.123456")).isEqualTo("2026-12-04T15:23:57.123456");
        assertThat(TextValues.isoTimestamp("infinity")).isEqualTo("infinity");
        assertThat(TextValues.isoTimestamp("0044-03-15 12:00:00+00 BC")).isEqualTo("0044-03-15T12:00:00+00:00 BC");
        assertThat(TextValues.isoTimestamp("0044-03-15 12:00:00 BC")).isEqualTo("0044-03-15T12:00:00 BC");
        assertThat(TextValues.isoTimestamp("-infinity")).isEqualTo("-infinity");
    }
}
