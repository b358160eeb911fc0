package io.tidemark.postgres.internal.outbox;

import java.util.LinkedHashMap;
import java.util.Map;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * Fills {@code {{name}}} placeholders of a SQL template. Every placeholder must be bound and every binding
 * used, so a typo in a template fails the build's tests instead of producing SQL with a hole in it.
 * Values are inserted verbatim: callers pass text that is already quoted (identifiers, literals).
 */
final class SqlTemplate {

    private static final Pattern PLACEHOLDER = Pattern.compile("\\{\\{([a-z_]+)}}");

    private final String text;
    private final Map<String, String> values = new LinkedHashMap<>();

    private SqlTemplate(String text) {
        this.text = text;
    }

    static SqlTemplate of(String text) {
        return new SqlTemplate(text);
    }

    SqlTemplate with(String name, String value) {
        if (values.put(name, value) != null) {
            throw new IllegalStateException("placeholder bound twice: " + name);
        }
        return this;
    }

    String render() {
        Matcher m = PLACEHOLDER.matcher(text);
        StringBuilder out = new StringBuilder(text.length() + 256);
        java.util.Set<String> used = new java.util.HashSet<>();
        while (m.find()) {
            String value = values.get(m.group(1));
            if (value == null) {
                throw new IllegalStateException("unbound placeholder {{" + m.group(1) + "}}");
            }
            used.add(m.group(1));
            m.appendReplacement(out, Matcher.quoteReplacement(value));
        }
        m.appendTail(out);
        if (!used.containsAll(values.keySet())) {
            throw new IllegalStateException("unused bindings: " + values.keySet().stream()
                    .filter(k -> !used.contains(k)).toList());
        }
        return out.toString();
    }
}
