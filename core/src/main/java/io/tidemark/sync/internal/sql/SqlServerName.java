package io.tidemark.sync.internal.sql;

import io.tidemark.sync.ErrorCode;
import io.tidemark.sync.TidemarkException;

import java.util.List;

/**
 * A SQL Server name, optionally schema-qualified, parsed the way SQL Server reads one: a regular identifier
 * (letters, digits, {@code _}, {@code @}, {@code #}, {@code $} after the first character) is taken as written,
 * and a bracketed part ({@code [Order Details]}, with {@code ]]} standing for one {@code ]}) may hold anything
 * but control characters. Anything else (a semicolon, a space outside brackets, a third part, a part longer
 * than 128 characters) is refused before it can reach SQL.
 *
 * <p>SQL Server does not fold case: whether {@code Items} and {@code items} are the same object depends on the
 * database's collation, so names are kept exactly as written.
 *
 * <p>{@link #quoted()} renders the name with every part bracketed, {@code [schema].[name]}, so it is always safe
 * to splice into a statement and always means the same object.
 */
public final class SqlServerName extends QualifiedName {

    /** {@code sysname} is {@code NVARCHAR(128)}: longer identifiers are refused by the server. */
    public static final int MAX_IDENTIFIER_LENGTH = 128;

    private SqlServerName(String schema, String name) {
        super(schema, name);
    }

    /**
     * Parses {@code name}, {@code schema.name}, or either with bracketed parts.
     *
     * @param what what the name is for, used in the error ("procedure", "table")
     */
    public static SqlServerName parse(String text, String what) {
        if (text == null || text.isBlank()) {
            throw new TidemarkException(ErrorCode.INVALID_IDENTIFIER, "The " + what + " name is empty");
        }
        List<String> parts = split(text.strip(), what);
        if (parts.size() > 2) {
            throw invalid(text, what, "it has more than two parts; use schema.name and connect to the database"
                    + " that holds the object");
        }
        return parts.size() == 1 ? new SqlServerName(null, parts.get(0))
                : new SqlServerName(parts.get(0), parts.get(1));
    }

    /** A name from parts that are already resolved (as stored in the catalog); each is checked, not parsed. */
    public static SqlServerName of(String schema, String name) {
        return new SqlServerName(schema == null ? null : checkPart(schema, "schema"), checkPart(name, "object"));
    }

    /** Checks one resolved identifier: not empty, no control character, at most 128 characters. */
    public static String checkPart(String identifier, String what) {
        if (identifier == null || identifier.isEmpty()) {
            throw new TidemarkException(ErrorCode.INVALID_IDENTIFIER, "The " + what + " name is empty");
        }
        for (int i = 0; i < identifier.length(); i++) {
            if (Character.isISOControl(identifier.charAt(i))) {
                throw new TidemarkException(ErrorCode.INVALID_IDENTIFIER, "The " + what + " name \""
                        + printable(identifier) + "\" contains a control character");
            }
        }
        if (identifier.length() > MAX_IDENTIFIER_LENGTH) {
            throw new TidemarkException(ErrorCode.INVALID_IDENTIFIER, "The " + what + " name \"" + identifier
                    + "\" is " + identifier.length() + " characters long; SQL Server allows "
                    + MAX_IDENTIFIER_LENGTH);
        }
        if (identifier.isBlank()) {
            throw new TidemarkException(ErrorCode.INVALID_IDENTIFIER, "The " + what + " name is only spaces");
        }
        return identifier;
    }

    /** Brackets one identifier, doubling embedded {@code ]}: {@code a]b} becomes {@code [a]]b]}. */
    public static String quote(String identifier) {
        return '[' + identifier.replace("]", "]]") + ']';
    }

    /**
     * Quotes a value as a Unicode string literal, {@code N'...'}, doubling embedded single quotes. For generated
     * scripts only; values sent at run time are always bound as parameters.
     */
    public static String literal(String value) {
        if (value.indexOf('\0') >= 0) {
            throw new TidemarkException(ErrorCode.INVALID_IDENTIFIER, "A literal cannot contain a NUL character");
        }
        return "N'" + value.replace("'", "''") + '\'';
    }

    /** The same name with {@code defaultSchema} filled in when no schema was given. */
    public SqlServerName withDefaultSchema(String defaultSchema) {
        return schema().isPresent() ? this : new SqlServerName(checkPart(defaultSchema, "schema"), name());
    }

    @Override
    String quotePart(String part) {
        return quote(part);
    }

    private static List<String> split(String text, String what) {
        return NameParts.split(text, new NameParts.Syntax('[', ']', "bracketed part", "bracket",
                part -> checkPart(part, what),
                raw -> {
                    if (raw.isEmpty()) {
                        throw invalid(text, what, "a part is missing"); // ".p", "dbo..p": as before the parser was shared
                    }
                    if (!isRegularIdentifier(raw)) {
                        throw invalid(text, what, "\"" + printable(raw) + "\" is not a regular identifier (a letter or _"
                                + " first, then letters, digits, _, @, # or $); bracket it, [like this], if the name"
                                + " really is like that");
                    }
                    return checkPart(raw, what);
                },
                why -> invalid(text, what, why)));
    }

    /**
     * SQL Server's rules for regular identifiers, except that a leading {@code @} (a variable) or {@code #} (a
     * temporary object, private to one session) is refused: neither can be a tracked table or change procedure.
     */
    static boolean isRegularIdentifier(String raw) {
        if (raw.isEmpty()) {
            return false;
        }
        int first = raw.codePointAt(0);
        if (!(Character.isLetter(first) || first == '_')) {
            return false;
        }
        for (int i = Character.charCount(first); i < raw.length(); ) {
            int c = raw.codePointAt(i);
            if (!(Character.isLetter(c) || Character.isDigit(c) || c == '_' || c == '@' || c == '#' || c == '$')) {
                return false;
            }
            i += Character.charCount(c);
        }
        return true;
    }

    private static String printable(String s) {
        return s.replaceAll("\\p{Cntrl}", "?");
    }

    private static TidemarkException invalid(String text, String what, String why) {
        return new TidemarkException(ErrorCode.INVALID_IDENTIFIER,
                "Refusing the " + what + " name '" + printable(text) + "': " + why + ". Names are checked and"
                        + " bracket-quoted, never pasted into SQL as given.");
    }
}
