package io.tidemark.postgres.internal.logical;

import com.fasterxml.jackson.core.JsonFactory;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.tidemark.postgres.internal.logical.PgOutput.Column;
import io.tidemark.postgres.internal.logical.PgOutput.Relation;
import io.tidemark.postgres.internal.logical.PgOutput.Tuple;
import org.junit.jupiter.api.Test;

import java.nio.charset.StandardCharsets;
import java.util.List;

import static org.assertj.core.api.Assertions.assertThat;

class ElementRendererTest {

    private static final Relation ITEMS = new Relation(1, "public", "items", List.of(
            new Column(true, "id", 23), new Column(false, "name", 25), new Column(false, "price", 1700),
            new Column(false, "ok", 16), new Column(false, "doc", 3802), new Column(false, "body", 25)));
    private static final ValueType[] TYPES = ITEMS.columns().stream()
            .map(c -> PgTypes.BUILT_IN.resolve(c.typeOid())).toArray(ValueType[]::new);

    private static Tuple tuple(String... values) {
        byte[] kinds = new byte[values.length];
        byte[][] bytes = new byte[values.length][];
        for (int i = 0; i < values.length; i++) {
            if (values[i] == null) {
                kinds[i] = PgOutput.NULL;
            } else if (values[i].equals("<toast>")) {
                kinds[i] = PgOutput.UNCHANGED_TOAST;
            } else {
                kinds[i] = PgOutput.TEXT;
                bytes[i] = values[i].getBytes(StandardCharsets.UTF_8);
            }
        }
        return new Tuple(kinds, bytes);
    }

    private static JsonNode json(byte[] element) throws Exception {
        return new ObjectMapper().readTree(element);
    }

    private final ElementRenderer renderer = new ElementRenderer(new JsonFactory());

    @Test
    void values_are_typed_as_row_to_json_types_them() throws Exception {
        JsonNode e = json(renderer.render('I', 42, ITEMS, TYPES, tuple("7", "a \"b\"", "Infinity", "t", "{\"k\": 1}", null),
                false, null, null));
        assertThat(e.toString()).isEqualTo("{\"$operation\":\"I\",\"$version\":42,\"id\":7,\"name\":\"a \\\"b\\\"\","
                + "\"price\":\"Infinity\",\"ok\":true,\"doc\":{\"k\":1},\"body\":null}");
    }

    @Test
    void a_key_only_row_leaves_the_other_columns_out_rather_than_showing_them_as_nulls() throws Exception {
        JsonNode e = json(renderer.render('D', 1, ITEMS, TYPES, tuple("7", null, null, null, null, null), true, null, null));
        assertThat(e.toString()).isEqualTo("{\"$operation\":\"D\",\"$version\":1,\"id\":7}");
    }

    @Test
    void changed_columns_compare_old_and_new_and_an_unchanged_large_value_comes_from_the_old_row() throws Exception {
        Tuple old = tuple("7", "a", "1.50", "t", null, "long text");
        Tuple row = tuple("7", "b", "1.50", "f", "{}", "<toast>");
        List<String> changed = ElementRenderer.changed(ITEMS, old, row);
        assertThat(changed).containsExactly("name", "ok", "doc");
        JsonNode e = json(renderer.render('U', 3, ITEMS, TYPES, row, false, changed, old));
        assertThat(e.get("$changed").toString()).isEqualTo("[\"name\",\"ok\",\"doc\"]");
        assertThat(e.get("body").asText()).isEqualTo("long text");
        assertThat(ElementRenderer.changed(ITEMS, null, row)).as("no old row, no $changed").isNull();
        JsonNode withoutOld = json(renderer.render('U', 3, ITEMS, TYPES, row, false, null, null));
        assertThat(withoutOld.has("body")).as("an unchanged large value without the old row is left out").isFalse();
        assertThat(withoutOld.has("$changed")).isFalse();
    }
}
