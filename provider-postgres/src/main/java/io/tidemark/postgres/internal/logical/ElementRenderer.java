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
 * the bytes. Values are typed as PostgreSQL's {@code row_to_json} types them, so a consumer sees the same JSON
 * whichever capture produced it: booleans and numbers bare (a {@code NaN} or infinite number as a string, since
 * JSON has no such number), {@code json} and {@code jsonb} as JSON, timestamps in ISO 8601 with a {@code T} and
 * {@code +hh:mm}, everything else as a string of the server's text output.
 */
final class ElementRenderer {

    private static final int BOOL = 16;
    private static final int INT8 = 20;
    private static final int INT2 = 21;
    private static final int INT4 = 23;
    private static final int JSON = 114;
    private static final int FLOAT4 = 700;
    private static final int FLOAT8 = 701;
    private static final int TIMESTAMP = 1114;
    private static final int TIMESTAMPTZ = 1184;
    private static final int NUMERIC = 1700;
    private static final int JSONB = 3802;

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
    byte[] render(char operation, long version, Relation relation, Tuple row, boolean keyOnly, List<String> changed,
                  Tuple fallback) {
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
                writeValue(g, columns.get(i).typeOid(), kind == PgOutput.NULL ? null : value);
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

    private static void writeValue(JsonGenerator g, int type, byte[] value) throws IOException {
        if (value == null) {
            g.writeNull();
            return;
        }
        String text = new String(value, StandardCharsets.UTF_8);
        switch (type) {
            case BOOL -> g.writeBoolean(text.equals("t"));
            case INT2, INT4, INT8 -> g.writeNumber(text);
            case FLOAT4, FLOAT8, NUMERIC -> {
                if (isFinite(text)) {
                    g.writeNumber(text);
                } else {
                    g.writeString(text);
                }
            }
            case JSON, JSONB -> g.writeRawValue(text);
            case TIMESTAMP, TIMESTAMPTZ -> g.writeString(isoTimestamp(text));
            default -> g.writeString(text);
        }
    }

    private static boolean isFinite(String number) {
        char first = number.charAt(0);
        return first != 'N' && first != 'I' && !(first == '-' && number.length() > 1 && number.charAt(1) == 'I');
    }

    /**
     * {@code 2026-12-04 15:23:57.123+00} as {@code row_to_json} writes it, {@code 2026-12-04T15:23:57.123+00:00}.
     * Infinite and BC timestamps keep the server's text.
     */
    static String isoTimestamp(String text) {
        if (text.length() < 19 || text.charAt(10) != ' ' || text.endsWith(" BC")) {
            return text;
        }
        StringBuilder iso = new StringBuilder(text.length() + 4).append(text, 0, 10).append('T')
                .append(text, 11, text.length());
        int sign = Math.max(iso.lastIndexOf("+"), iso.lastIndexOf("-"));
        if (sign >= 19 && iso.length() - sign == 3) {
            iso.append(":00");
        }
        return iso.toString();
    }
}
