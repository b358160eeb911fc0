package io.tidemark.sync.internal.sql;

import java.util.ArrayList;
import java.util.List;

/**
 * Splits a possibly qualified SQL name ({@code part.part}) into its parts, the way both PostgreSQL and SQL Server
 * read names: a part is either delimited ({@code "..."} or {@code [...]}, the closing delimiter doubled to stand
 * for itself) or plain (up to the next dot). What a plain part may hold, how parts are checked and what the errors
 * say belong to each dialect.
 */
final class NameParts {

    /** What differs between dialects. */
    interface Syntax {
        char open();

        char close();

        /** Checks a delimited part, taken as written. */
        String delimited(String part);

        /** Checks (and, for PostgreSQL, folds) a plain part; throws when it is not a plain identifier. */
        String plain(String raw);

        /** An error about the whole text: {@code why} it was refused. */
        RuntimeException invalid(String why);

        /** How the errors name a delimited part and its delimiter: "quoted part", "double quote". */
        String delimitedPartName();

        String delimiterName();
    }

    private NameParts() {
    }

    static List<String> split(String text, Syntax syntax) {
        List<String> parts = new ArrayList<>(2);
        int i = 0;
        int n = text.length();
        while (true) {
            if (i >= n) {
                throw syntax.invalid("a part is missing");
            }
            if (text.charAt(i) == syntax.open()) {
                StringBuilder part = new StringBuilder();
                i++;
                while (true) {
                    if (i >= n) {
                        throw syntax.invalid("a " + syntax.delimiterName() + " is not closed");
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
                        throw syntax.invalid("it contains a control character");
                    }
                    part.append(c);
                    i++;
                }
                parts.add(syntax.delimited(part.toString()));
            } else {
                int start = i;
                while (i < n && text.charAt(i) != '.') {
                    i++;
                }
                parts.add(syntax.plain(text.substring(start, i)));
            }
            if (i == n) {
                return parts;
            }
            if (text.charAt(i) != '.') {
                throw syntax.invalid("unexpected character '" + text.charAt(i) + "' after a "
                        + syntax.delimitedPartName());
            }
            i++;
        }
    }
}
