package io.tidemark.sqlserver.internal;

import io.tidemark.sync.ErrorCode;
import io.tidemark.sync.TidemarkException;
import io.tidemark.sync.spi.ResponsePayload;
import io.tidemark.sqlserver.internal.CallResults.ResultColumn;

import java.io.IOException;
import java.sql.SQLException;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Set;

/**
 * Finds the JSON document among what a change procedure returned and spools it, chunk by chunk, into a
 * {@link ResponsePayload}.
 *
 * <p>The document is the procedure's one result set: the single column {@code FOR JSON} produces (SQL Server
 * names it {@value #FOR_JSON_COLUMN}), or a single text column for a procedure that built its JSON in a variable.
 * Anything else is refused with an error that says what was found, so that a stray debug {@code SELECT} before the
 * document is reported as such instead of being parsed as the change set. Results after the document are refused
 * too: the contract is one document, and a trailing result set means the procedure does something unexpected.
 */
public final class ResponseReader {

    /** The name SQL Server gives the single column of a {@code FOR JSON} result. */
    public static final String FOR_JSON_COLUMN = "JSON_F52E2B61-18A1-11d1-B105-00805F49916B";

    /** Column types that can carry a JSON document built by hand ({@code SELECT @json}). */
    private static final Set<String> TEXT_TYPES =
            Set.of("nvarchar", "varchar", "ntext", "text", "nchar", "char", "json");

    private enum Kind { FOR_JSON, TEXT, OTHER }

    private final String objectName;
    private final String procedure;

    public ResponseReader(String objectName, String procedure) {
        this.objectName = objectName;
        this.procedure = procedure;
    }

    /**
     * Reads the results to their end and returns the document. Closes the payload again if anything after the
     * document is wrong.
     */
    public ResponsePayload read(CallResults results) throws SQLException, IOException {
        List<String> notDocuments = new ArrayList<>();
        ResponsePayload document = null;
        Kind documentKind = null;
        String documentDescription = null;
        int index = 0;
        try {
            while (results.nextResultSet()) {
                index++;
                List<ResultColumn> columns = results.columns();
                Kind kind = classify(columns);
                String description = describe(index, columns);
                if (document != null) {
                    if (documentKind == Kind.TEXT && kind == Kind.FOR_JSON) {
                        throw strayBefore(List.of(documentDescription), index);
                    }
                    throw invalid("it returned another result set, " + description + ", after its JSON document ("
                            + documentDescription + "). A change procedure returns exactly one result set: remove"
                            + " the extra SELECT, or SET NOCOUNT ON if it comes from a row count");
                }
                if (kind == Kind.OTHER) {
                    notDocuments.add(description);
                    continue;
                }
                if (!notDocuments.isEmpty()) {
                    throw strayBefore(notDocuments, index);
                }
                document = ResponsePayload.spool(new ChunkedReader(results.chunks()));
                documentKind = kind;
                documentDescription = description;
            }
        } catch (SQLException | IOException | RuntimeException e) {
            if (document != null) {
                document.close();
            }
            throw e;
        }
        if (document != null) {
            return document;
        }
        if (notDocuments.isEmpty()) {
            throw TidemarkException.forObject(ErrorCode.EMPTY_RESPONSE, objectName, "procedure " + procedure
                    + " returned no result set; it must end with SELECT ... FOR JSON PATH, WITHOUT_ARRAY_WRAPPER"
                    + " returning one document with Metadata.Sync.Version. Nothing was delivered and the watermark"
                    + " did not move.");
        }
        throw invalid("none of its result sets is a JSON document: " + String.join("; ", notDocuments)
                + ". Expected the single column that SELECT ... FOR JSON PATH, WITHOUT_ARRAY_WRAPPER returns");
    }

    private TidemarkException strayBefore(List<String> stray, int documentIndex) {
        return invalid("it returned " + (stray.size() == 1 ? "a result set" : stray.size() + " result sets")
                + " before its JSON document (result set #" + documentIndex + "): " + String.join("; ", stray)
                + ". This is usually a debug SELECT left in the procedure; remove it so that the JSON document is"
                + " the only result set");
    }

    private TidemarkException invalid(String problem) {
        return TidemarkException.forObject(ErrorCode.INVALID_RESPONSE, objectName, "procedure " + procedure
                + " broke the procedure contract: " + problem + ". Nothing was delivered and the watermark did"
                + " not move.");
    }

    private static Kind classify(List<ResultColumn> columns) {
        if (columns.size() != 1) {
            return Kind.OTHER;
        }
        ResultColumn column = columns.get(0);
        if (FOR_JSON_COLUMN.equalsIgnoreCase(column.name())) {
            return Kind.FOR_JSON;
        }
        String type = column.typeName() == null ? "" : column.typeName().toLowerCase(Locale.ROOT);
        return TEXT_TYPES.contains(type) ? Kind.TEXT : Kind.OTHER;
    }

    private static String describe(int index, List<ResultColumn> columns) {
        StringBuilder sb = new StringBuilder("#").append(index).append(" with ");
        sb.append(columns.size() == 1 ? "column " : "columns ");
        int shown = Math.min(columns.size(), 8);
        for (int i = 0; i < shown; i++) {
            if (i > 0) {
                sb.append(", ");
            }
            sb.append(columns.get(i));
        }
        if (columns.size() > shown) {
            sb.append(", ... (").append(columns.size()).append(" in all)");
        }
        return sb.toString();
    }
}
