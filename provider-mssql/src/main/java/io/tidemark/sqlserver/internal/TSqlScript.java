package io.tidemark.sqlserver.internal;

import io.tidemark.sync.ErrorCode;
import io.tidemark.sync.TidemarkException;
import io.tidemark.sync.internal.jdbc.SqlContext;
import io.tidemark.sync.internal.jdbc.SqlErrors;

import javax.sql.DataSource;
import java.sql.Connection;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.ArrayList;
import java.util.List;
import java.util.regex.Pattern;

/**
 * The generators' script conventions: batches separated by a line holding only {@code GO} (what sqlcmd and SSMS
 * expect, and what {@code CREATE PROCEDURE} needs, since it must start its batch), and running such a script over
 * JDBC one batch at a time.
 *
 * <p>Splitting on {@code GO} lines is safe for the generators' own scripts: every name and literal in them was
 * checked to hold no line break, so no line of theirs can be {@code GO} by accident.
 */
public final class TSqlScript {

    /** The batch separator line. */
    public static final String GO = "GO";

    private static final Pattern GO_LINE = Pattern.compile("(?m)^[ \\t]*GO[ \\t]*$\\R?", Pattern.CASE_INSENSITIVE);

    private TSqlScript() {
    }

    /** The script's batches, without separators and without batches that are empty or only comments. */
    public static List<String> batches(String script) {
        List<String> batches = new ArrayList<>();
        for (String batch : GO_LINE.split(script)) {
            if (hasStatement(batch)) {
                batches.add(batch.strip());
            }
        }
        return batches;
    }

    /** Runs every batch of the script in order, on one connection, with auto-commit. */
    public static void run(DataSource dataSource, String script, String what) {
        List<String> batches = batches(script);
        try (Connection c = dataSource.getConnection(); Statement s = c.createStatement()) {
            for (int i = 0; i < batches.size(); i++) {
                try {
                    s.execute(batches.get(i));
                    drain(s);
                } catch (SQLException e) {
                    if (SqlErrors.isConnectionFailure(e)) {
                        throw e; // the connection broke: reported as such below, not as a fault of the batch
                    }
                    throw new TidemarkException(ErrorCode.SCHEMA_UNSUPPORTED, "Installing " + what + " failed in batch "
                            + (i + 1) + " of " + batches.size() + ": " + SqlServerErrors.detail(e)
                            + ". Review the script (script()) and run it by hand to see the whole context.", e);
                }
            }
        } catch (SQLException e) {
            TidemarkException connection = SqlServerErrors.connectionFailure(e,
                    SqlContext.of(dataSource, null, "installing " + what));
            if (connection != null) {
                throw connection;
            }
            throw new TidemarkException(ErrorCode.SCHEMA_UNSUPPORTED, "Installing " + what + " failed: "
                    + SqlServerErrors.detail(e), e);
        }
    }

    /** Reads past every result so that errors raised late in a batch are not lost. */
    private static void drain(Statement s) throws SQLException {
        while (s.getMoreResults() || s.getUpdateCount() != -1) {
            // nothing to keep
        }
    }

    /** A comment block framed by rules, one {@code -- } line per entry (an empty entry gives a bare {@code --}). */
    public static String banner(String... lines) {
        String rule = "-- " + "=".repeat(100) + "\n";
        StringBuilder sb = new StringBuilder(rule);
        for (String line : lines) {
            sb.append(line.isEmpty() ? "--" : "-- " + line).append('\n');
        }
        return sb.append(rule).toString();
    }

    /** A JSON string literal for a name: quoted, with {@code "} and {@code \} escaped. */
    public static String jsonString(String name) {
        StringBuilder sb = new StringBuilder(name.length() + 2).append('"');
        for (int i = 0; i < name.length(); i++) {
            char c = name.charAt(i);
            if (c == '"' || c == '\\') {
                sb.append('\\');
            }
            sb.append(c);
        }
        return sb.append('"').toString();
    }

    private static boolean hasStatement(String batch) {
        for (String line : batch.split("\\R")) {
            String s = line.strip();
            if (!s.isEmpty() && !s.startsWith("--")) {
                return true;
            }
        }
        return false;
    }
}
