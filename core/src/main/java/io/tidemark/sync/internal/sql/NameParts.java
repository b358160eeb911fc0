package io.tidemark.sync.internal.sql;

import java.util.ArrayList;
import java.util.List;
import java.util.function.Function;
import java.util.function.UnaryOperator;

/**
 * Splits a possibly qualified SQL name ({@code part.part}) into its parts, the way both PostgreSQL and SQL Server
 * read names: a part is either delimited ({@code "..."} or {@code [...]}, the closing delimiter doubled to stand
 * for itself) or plain (up to the next dot). What a plain part may hold, how parts are checked and what the errors
 * say belong to each dialect.
 */
final class NameParts {

    /**
     * What differs between dialects.
     *
     * @param open              the opening delimiter of a delimited part
     * @param close             its closing delimiter (doubled inside the part to stand for itself)
     * @param delimitedPartName how errors name a delimited part: "quoted part"
     * @param delimiterName     how errors name the delimiter: "double quote"
     * @param delimited         checks a delimited part, taken as written
     * @param plain             checks (and, for PostgreSQL, folds) a plain part; throws when it is not one
     * @param invalid           an error about the whole text, saying why it was refused
     */
    record Syntax(char open, char close, String delimitedPartName, String delimiterName,
                  UnaryOperator<String> delimited, UnaryOperator<String> plain,
                  Function<String, RuntimeException> invalid) {
    }

    private NameParts() {
    }

    static List<String> split(String text, Syntax syntax) {
        List<String> parts = new ArrayList<>(2);
        int i = 0;
        int n = text.length();
        while (true) {
            if (i >= n) {
                throw syntax.invalid().apply("a part is missing");
            }
            if (text.charAt(i) == syntax.open()) {
                StringBuilder part = new StringBuilder();
                i++;
                while (true) {
                    if (i >= n) {
                        throw syntax.invalid().apply("a " + syntax.delimiterName() + " is not closed");
                    }
                    char c = text.charAt(i);
                    if (c == syntax.close()) {
                        if (i + 1 < n && text.charAt(i + 1) == syntax.close()) {
                            part.append(c);
                            i += 2;
                            continue;
                        }
                        i++;
                        break;
                    }
                    if (Character.isISOControl(c)) {
                        throw syntax.invalid().apply("it contains a control character");
                    }
                    part.append(c);
                    i++;
                }
                parts.add(syntax.delimited().apply(part.toString()));
            } else {
                int start = i;
                while (i < n && text.charAt(i) != '.') {
                    i++;
                }
                parts.add(syntax.plain().apply(text.substring(start, i)));
            }
            if (i == n) {
                return parts;
            }
            if (text.charAt(i) != '.') {
                throw syntax.invalid().apply("unexpected character '" + text.charAt(i) + "' after a "
                        + syntax.delimitedPartName());
            }
            i++;
        }
    }
}
