package io.tidemark.postgres.internal.logical;

import com.fasterxml.jackson.core.JsonGenerator;

import java.io.IOException;
import java.util.ArrayList;
import java.util.List;

/**
 * Writes a value the stream carries as the server's text output the way {@code row_to_json} writes that type:
 * booleans and numbers bare (a {@code NaN} or infinite number as a string, since JSON has no such number),
 * {@code json} and {@code jsonb} as JSON, timestamps in ISO 8601 with a {@code T} and {@code +hh:mm}, arrays as JSON
 * arrays and composite values as objects (their elements typed the same way), everything else as a string. An array
 * or composite text that does not parse (a type changed since the stream connected) is written as a string.
 */
final class TextValues {

    private TextValues() {
    }

    static void write(JsonGenerator g, ValueType type, String text) throws IOException {
        if (text == null) {
            g.writeNull();
            return;
        }
        switch (type.kind()) {
            case BOOLEAN -> g.writeBoolean(text.equals("t"));
            case NUMBER -> {
                if (isFinite(text)) {
                    g.writeNumber(text);
                } else {
                    g.writeString(text);
                }
            }
            case JSON -> g.writeRawValue(text);
            case TIMESTAMP -> g.writeString(isoTimestamp(text));
            case ARRAY -> {
                List<Object> elements = parseArray(text, type.delimiter());
                if (elements == null) {
                    g.writeString(text);
                } else {
                    writeArray(g, type.element(), elements);
                }
            }
            case COMPOSITE -> {
                List<String> fields = parseComposite(text);
                if (fields == null || fields.size() != type.fieldNames().size()) {
                    g.writeString(text);
                } else {
                    g.writeStartObject();
                    for (int i = 0; i < fields.size(); i++) {
                        g.writeFieldName(type.fieldNames().get(i));
                        write(g, type.fieldTypes().get(i), fields.get(i));
                    }
                    g.writeEndObject();
                }
            }
            default -> g.writeString(text);
        }
    }

    @SuppressWarnings("unchecked")
    private static void writeArray(JsonGenerator g, ValueType element, List<Object> elements) throws IOException {
        g.writeStartArray();
        for (Object e : elements) {
            if (e instanceof List<?> nested) {
                writeArray(g, element, (List<Object>) nested); // a further dimension
            } else {
                write(g, element, (String) e);
            }
        }
        g.writeEndArray();
    }

    private static boolean isFinite(String number) {
        char first = number.charAt(0);
        return first != 'N' && first != 'I' && !(first == '-' && number.length() > 1 && number.charAt(1) == 'I');
    }

    /**
     * {@code 2026-12-04 15:23:57.123+00} as {@code row_to_json} writes it, {@code 2026-12-04T15:23:57.123+00:00}
     * (a BC timestamp keeps its era at the end, as there). Infinite timestamps keep the server's text.
     */
    static String isoTimestamp(String text) {
        boolean bc = text.endsWith(" BC");
        int end = bc ? text.length() - 3 : text.length();
        if (end < 19 || text.charAt(10) != ' ') {
            return text; // infinity, -infinity
        }
        StringBuilder iso = new StringBuilder(text.length() + 4).append(text, 0, 10).append('T')
                .append(text, 11, end);
        int sign = Math.max(iso.lastIndexOf("+"), iso.lastIndexOf("-"));
        if (sign >= 19 && iso.length() - sign == 3) {
            iso.append(":00");
        }
        return bc ? iso.append(" BC").toString() : iso.toString();
    }

    /**
     * An array's text output, {@code {1,NULL,"a \"b\""}} or {@code [0:1]={{1,2},{3,4}}}, as nested lists of element
     * texts (null for {@code NULL}); null when it is not an array's text.
     */
    static List<Object> parseArray(String text, char delimiter) {
        int start = 0;
        if (text.startsWith("[")) {
            start = text.indexOf('=') + 1; // lower bounds other than 1: JSON has none to show
        }
        if (start <= 0 && !text.startsWith("{") || start >= text.length() || text.charAt(start) != '{') {
            return null;
        }
        try {
            int[] at = {start};
            List<Object> elements = arrayLevel(text, delimiter, at);
            return at[0] == text.length() ? elements : null;
        } catch (IndexOutOfBoundsException malformed) {
            return null;
        }
    }

    private static List<Object> arrayLevel(String text, char delimiter, int[] at) {
        List<Object> elements = new ArrayList<>();
        at[0]++; // '{'
        if (text.charAt(at[0]) == '}') {
            at[0]++;
            return elements;
        }
        while (true) {
            char c = text.charAt(at[0]);
            if (c == '{') {
                elements.add(arrayLevel(text, delimiter, at));
            } else if (c == '"') {
                elements.add(quoted(text, at));
            } else {
                int end = at[0];
                while (text.charAt(end) != delimiter && text.charAt(end) != '}') {
                    end++;
                }
                String element = text.substring(at[0], end);
                elements.add(element.equalsIgnoreCase("NULL") ? null : element);
                at[0] = end;
            }
            char next = text.charAt(at[0]++);
            if (next == '}') {
                return elements;
            }
            if (next != delimiter) {
                throw new IndexOutOfBoundsException("unexpected " + next);
            }
        }
    }

    /** A double-quoted element at {@code at}: a backslash keeps the next character, a doubled quote is one. */
    private static String quoted(String text, int[] at) {
        StringBuilder value = new StringBuilder();
        int i = at[0] + 1;
        while (true) {
            char c = text.charAt(i);
            if (c == '\\') {
                value.append(text.charAt(i + 1));
                i += 2;
            } else if (c == '"') {
                if (i + 1 < text.length() && text.charAt(i + 1) == '"') {
                    value.append('"');
                    i += 2;
                } else {
                    at[0] = i + 1;
                    return value.toString();
                }
            } else {
                value.append(c);
                i++;
            }
        }
    }

    /**
     * A composite value's text output, {@code (1,,"a ""b""")}, as its fields' texts (null for an empty field, which
     * is {@code NULL}); null when it is not a composite's text.
     */
    static List<String> parseComposite(String text) {
        if (!text.startsWith("(") || !text.endsWith(")")) {
            return null;
        }
        List<String> fields = new ArrayList<>();
        try {
            int[] at = {1};
            while (true) {
                char c = text.charAt(at[0]);
                if (c == ',' || c == ')') {
                    fields.add(null);
                } else if (c == '"') {
                    fields.add(quoted(text, at));
                } else {
                    int end = at[0];
                    while (text.charAt(end) != ',' && text.charAt(end) != ')') {
                        end++;
                    }
                    fields.add(text.substring(at[0], end));
                    at[0] = end;
                }
                char next = text.charAt(at[0]++);
                if (next == ')') {
                    return at[0] == text.length() ? fields : null;
                }
                if (next != ',') {
                    return null;
                }
            }
        } catch (IndexOutOfBoundsException malformed) {
            return null;
        }
    }
}
