package io.tidemark.sync.internal.sql;

import io.tidemark.sync.ErrorCode;
import io.tidemark.sync.TidemarkException;

import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.regex.Pattern;

/**
 * A PostgreSQL name, optionally schema-qualified, parsed the way PostgreSQL itself reads one: unquoted parts
 * fold to lower case, double-quoted parts are taken as written. Anything else (a semicolon, a space outside
 * quotes, a third part, an over-long part) is refused before it can reach SQL.
 *
 * <p>{@link #quoted()} renders the name with every part double-quoted, so it is always safe to splice into a
 * statement and always means the same object.
 */
public final class PgName extends QualifiedName {

    /** PostgreSQL's NAMEDATALEN - 1: longer identifiers are silently truncated by the server. */
    public static final int MAX_IDENTIFIER_BYTES = 63;

    private static final Pattern UNQUOTED = Pattern.compile("[A-Za-z_][A-Za-z0-9_$]*");

    private PgName(String schema, String name) {
        super(schema, name);
    }

    /**
     * Parses {@code name}, {@code schema.name}, or either with double-quoted parts.
     *
     * @param what what the name is for, used in the error ("function", "table")
     */
    public static PgName parse(String text, String what) {
        if (text == null || text.isBlank()) {
            throw new TidemarkException(ErrorCode.INVALID_IDENTIFIER, "The " + what + " name is empty");
        }
        List<String> parts = split(text.strip(), what);
        if (parts.size() > 2) {
            throw invalid(text, what, "it has more than two parts; use schema.name");
        }
        return parts.size() == 1 ? new PgName(null, parts.get(0)) : new PgName(parts.get(0), parts.get(1));
    }

    /** A name from parts that are already resolved (as stored in the catalog); each is checked, not folded. */
    public static PgName of(String schema, String name) {
        return new PgName(schema == null ? null : checkPart(schema, "schema"), checkPart(name, "object"));
    }

    /** Checks one resolved identifier: not empty, no NUL, at most 63 bytes. Returns it unchanged. */
    public static String checkPart(String identifier, String what) {
        if (identifier == null || identifier.isEmpty()) {
            throw new TidemarkException(ErrorCode.INVALID_IDENTIFIER, "The " + what + " name is empty");
        }
        if (identifier.indexOf('\0') >= 0) {
            throw new TidemarkException(ErrorCode.INVALID_IDENTIFIER,
                    "The " + what + " name contains a NUL character");
        }
        int bytes = identifier.getBytes(StandardCharsets.UTF_8).length;
        if (bytes > MAX_IDENTIFIER_BYTES) {
            throw new TidemarkException(ErrorCode.INVALID_IDENTIFIER, "The " + what + " name \"" + identifier
                    + "\" is " + bytes + " bytes long; PostgreSQL keeps only " + MAX_IDENTIFIER_BYTES
                    + " and would silently truncate it");
        }
        return identifier;
    }

    /** Double-quotes one identifier, doubling embedded quotes. */
    public static String quote(String identifier) {
        return '"' + identifier.replace("\"", "\"\"") + '"';
    }

    /** Quotes a value as a SQL string literal, doubling embedded single quotes. For generated DDL only. */
    public static String literal(String value) {
        if (value.indexOf('\0') >= 0) {
            throw new TidemarkException(ErrorCode.INVALID_IDENTIFIER, "A literal cannot contain a NUL character");
        }
        return '\'' + value.replace("'", "''") + '\'';
    }

    /** The same name with {@code defaultSchema} filled in when no schema was given. */
    public PgName withDefaultSchema(String defaultSchema) {
        return schema().isPresent() ? this : new PgName(checkPart(defaultSchema, "schema"), name());
    }

    @Override
    String quotePart(String part) {
        return quote(part);
    }

    private static List<String> split(String text, String what) {
        return NameParts.split(text, new NameParts.Syntax('"', '"', "quoted part", "double quote",
                part -> checkPart(part, what),
                raw -> {
                    if (!UNQUOTED.matcher(raw).matches()) {
                        throw invalid(text, what, "\"" + raw + "\" is not a plain identifier (letters, digits, _ and"
                                + " $, not starting with a digit); double-quote it if the name really is like that");
                    }
                    return checkPart(raw.toLowerCase(java.util.Locale.ROOT), what);
                },
                why -> invalid(text, what, why)));
    }

    private static TidemarkException invalid(String text, String what, String why) {
        return new TidemarkException(ErrorCode.INVALID_IDENTIFIER,
                "Refusing the " + what + " name '" + text + "': " + why + ". Names are checked and quoted, never"
                        + " pasted into SQL as given.");
    }
}
