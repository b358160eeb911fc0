package io.tidemark.history.internal.ddl;

import java.util.Objects;

/**
 * One statement of an installation, with the comment that explains it to a DBA reading the script.
 *
 * @param comment one or more lines, rendered as {@code -- } comments above the statement
 * @param sql     the statement, without a trailing semicolon
 */
public record SqlStep(String comment, String sql) {

    public SqlStep {
        Objects.requireNonNull(comment, "comment");
        Objects.requireNonNull(sql, "sql");
    }

    String render() {
        StringBuilder out = new StringBuilder();
        for (String line : comment.split("\n")) {
            out.append("-- ").append(line).append('\n');
        }
        return out.append(sql).append(";\n").toString();
    }
}
