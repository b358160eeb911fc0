package io.tidemark.sync.internal.sql;

import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Set;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * The one way Tidemark writes SQL: a text block with {@code {{name}}} placeholders. Every placeholder must be
 * bound and every binding used, so a typo in a template fails the build's tests instead of producing SQL with a
 * hole in it.
 *
 * <p>Values are inserted verbatim: callers pass text that is already quoted (identifiers through the name
 * classes, literals through their quoting helpers). Data values never go through a template; they are bound
 * JDBC parameters.
 */
public final class SqlTemplate {

    private static final Pattern PLACEHOLDER = Pattern.compile("\\{\\{([a-z_][a-z0-9_]*)}}");

    private final String text;
    private final Map<String, String> values = new LinkedHashMap<>();

    private SqlTemplate(String text) {
        this.text = text;
    }

    public static SqlTemplate of(String text) {
        return new SqlTemplate(text);
    }

    public SqlTemplate with(String name, String value) {
        if (value == null) {
            throw new IllegalStateException("placeholder bound to null: " + name);
        }
        if (values.put(name, value) != null) {
            throw new IllegalStateException("placeholder bound twice: " + name);
        }
        return this;
    }

    public SqlTemplate with(String name, long value) {
        return with(name, Long.toString(value));
    }

    public String render() {
        Matcher m = PLACEHOLDER.matcher(text);
        StringBuilder out = new StringBuilder(text.length() + 256);
        Set<String> used = new HashSet<>();
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
