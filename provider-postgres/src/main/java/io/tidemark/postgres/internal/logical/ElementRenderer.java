package io.tidemark.postgres.internal.logical;

import com.fasterxml.jackson.core.JsonFactory;
import com.fasterxml.jackson.core.JsonGenerator;
import io.tidemark.postgres.internal.logical.PgOutput.Column;
import io.tidemark.postgres.internal.logical.PgOutput.Relation;
import io.tidemark.postgres.internal.logical.PgOutput.Tuple;

import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;

/**
 * Writes one change as the contract's element ({@code $operation}, {@code $version}, {@code $changed}, then the
 * columns), from the text values of a decoded row, once, when its transaction is decoded: a read then only copies
 * the bytes. Values are typed as PostgreSQL's {@code row_to_json} types them ({@link TextValues}, by the column
 * types the stream resolved for the relation), so a consumer sees the same JSON whichever capture produced it and
 * whether a row came in a change or in an export.
 */
final class ElementRenderer {

    private final JsonFactory factory;

    ElementRenderer(JsonFactory factory) {
        this.factory = factory;
    }

    /**
     * One change's element. {@code row} is the new row (insert, update) or the old one (delete); {@code keyOnly}
     * when it holds the key columns alone (a delete or a key change under the default replica identity), whose
     * other columns are then left out rather than shown as nulls. {@code changed} is null when the old row is not
     * known; {@code fallback} is the old row, which supplies the large values an update left unchanged.
     */
    byte[] render(char operation, long version, Relation relation, ValueType[] types, Tuple row, boolean keyOnly,
                  List<String> changed, Tuple fallback) {
        ByteArrayOutputStream out = new ByteArrayOutputStream(256);
        try (JsonGenerator g = factory.createGenerator(out)) {
            g.writeStartObject();
            g.writeStringField("$operation", String.valueOf(operation));
            g.writeNumberField("$version", version);
            if (changed != null) {
                g.writeArrayFieldStart("$changed");
                for (String name : changed) {
                    g.writeString(name);
                }
                g.writeEndArray();
            }
            List<Column> columns = relation.columns();
            for (int i = 0; i < columns.size() && i < row.size(); i++) {
                if (keyOnly && !columns.get(i).key()) {
                    continue;
                }
                byte kind = row.kind(i);
                byte[] value = row.value(i);
                if (kind == PgOutput.UNCHANGED_TOAST) {
                    // A large value the update left alone: the WAL does not repeat it. Take it from the old row
                    // when the table logs whole old rows; otherwise leave the column out (it did not change).
                    if (fallback == null || fallback.kind(i) == PgOutput.UNCHANGED_TOAST) {
                        continue;
                    }
                    kind = fallback.kind(i);
                    value = fallback.value(i);
                }
                g.writeFieldName(columns.get(i).name());
                TextValues.write(g, types[i], kind == PgOutput.NULL ? null : new String(value, StandardCharsets.UTF_8));
            }
            g.writeEndObject();
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
        return out.toByteArray();
    }

    /**
     * The columns an update changed: those whose value differs between the old and the new row, compared as the
     * server's text output (a column the update left as an unchanged large value did not change). Null when the old
     * row is not known.
     */
    static List<String> changed(Relation relation, Tuple old, Tuple row) {
        if (old == null) {
            return null;
        }
        List<String> changed = new ArrayList<>();
        List<Column> columns = relation.columns();
        for (int i = 0; i < columns.size() && i < row.size(); i++) {
            byte kind = row.kind(i);
            if (kind == PgOutput.UNCHANGED_TOAST) {
                continue;
            }
            if (kind != old.kind(i) || (kind == PgOutput.TEXT && !Arrays.equals(row.value(i), old.value(i)))) {
                changed.add(columns.get(i).name());
            }
        }
        return changed;
    }
}
