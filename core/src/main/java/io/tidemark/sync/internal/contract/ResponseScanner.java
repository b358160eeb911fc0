package io.tidemark.sync.internal.contract;

import com.fasterxml.jackson.core.JsonParser;
import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.core.JsonToken;
import io.tidemark.sync.Operation;
import io.tidemark.sync.SyncType;
import io.tidemark.sync.TidemarkException;
import io.tidemark.sync.internal.Json;
import io.tidemark.sync.spi.ResponsePayload;

import java.io.IOException;

/**
 * The checking pass over a response: reads it as a token stream (no tree, no copy), enforces every rule of the
 * contract, and summarises it. Rows are counted and their contract keys checked, their own columns skipped.
 *
 * <p>Nothing may be delivered from a response that breaks the contract anywhere, even in its last row, so
 * this pass runs to the end before the delivering pass starts.
 */
public final class ResponseScanner {

    private ResponseScanner() {
    }

    public static ResponseSummary scan(String objectName, ResponsePayload payload) {
        if (payload.isBlank()) {
            throw PayloadErrors.empty(objectName);
        }
        try (JsonParser p = payload.openParser(Json.FACTORY)) {
            return new Scan(objectName, p).run();
        } catch (JsonProcessingException e) {
            throw PayloadErrors.malformed(objectName, payload, e);
        } catch (IOException e) {
            throw PayloadErrors.unreadable(objectName, e);
        }
    }

    /** State of one scan. */
    private static final class Scan {
        private final String objectName;
        private final JsonParser p;

        private Long version;
        private SyncType type;
        private Integer reasonCode;
        private boolean seenMetadata;
        private boolean seenSync;
        private boolean seenData;
        private long rows;
        private Long highest;
        /** Every row so far carries a {@code $version}, none lower than the row before it. */
        private boolean ascending = true;
        private Long previous;

        Scan(String objectName, JsonParser p) {
            this.objectName = objectName;
            this.p = p;
        }

        ResponseSummary run() throws IOException {
            JsonToken first = p.nextToken();
            if (first != JsonToken.START_OBJECT) {
                throw invalid("the response must be a JSON object, got " + PayloadErrors.describe(p));
            }
            while (p.nextToken() == JsonToken.FIELD_NAME) {
                String key = p.currentName();
                p.nextToken();
                if (ContractKeys.envelopeKey(key, ContractKeys.METADATA)) {
                    seenMetadata = once(seenMetadata, "Metadata");
                    metadata();
                } else if (ContractKeys.envelopeKey(key, ContractKeys.DATA)) {
                    seenData = once(seenData, "Data");
                    data();
                } else {
                    p.skipChildren();
                }
            }
            if (p.nextToken() != null) {
                throw invalid("there is more after the JSON document (" + PayloadErrors.describe(p)
                        + "); a procedure must return exactly one document");
            }
            if (!seenMetadata) {
                throw invalid("Metadata is missing; the response needs Metadata.Sync.Version");
            }
            if (!seenSync) {
                throw invalid("Metadata.Sync is missing; the response needs Metadata.Sync.Version");
            }
            if (version == null) {
                throw invalid("Metadata.Sync.Version is missing");
            }
            return new ResponseSummary(version, type == null ? SyncType.DIFF : type,
                    reasonCode == null ? 0 : reasonCode, rows, highest, ascending);
        }

        private void metadata() throws IOException {
            if (p.currentToken() != JsonToken.START_OBJECT) {
                throw invalid("Metadata must be an object, got " + PayloadErrors.describe(p));
            }
            while (p.nextToken() == JsonToken.FIELD_NAME) {
                String key = p.currentName();
                p.nextToken();
                if (ContractKeys.envelopeKey(key, ContractKeys.SYNC)) {
                    seenSync = once(seenSync, "Metadata.Sync");
                    sync();
                } else {
                    p.skipChildren();
                }
            }
        }

        private void sync() throws IOException {
            if (p.currentToken() != JsonToken.START_OBJECT) {
                throw invalid("Metadata.Sync must be an object, got " + PayloadErrors.describe(p));
            }
            while (p.nextToken() == JsonToken.FIELD_NAME) {
                String key = p.currentName();
                p.nextToken();
                if (ContractKeys.envelopeKey(key, ContractKeys.VERSION)) {
                    if (version != null) {
                        throw invalid("Metadata.Sync.Version appears twice");
                    }
                    version = requireLong("Metadata.Sync.Version", false);
                } else if (ContractKeys.envelopeKey(key, ContractKeys.TYPE)) {
                    type = syncType();
                } else if (ContractKeys.envelopeKey(key, ContractKeys.REASON_CODE)) {
                    reasonCode = reasonCode();
                } else {
                    p.skipChildren();
                }
            }
        }

        private SyncType syncType() throws IOException {
            if (p.currentToken() == JsonToken.VALUE_NULL) {
                return null;
            }
            if (p.currentToken() != JsonToken.VALUE_STRING) {
                throw invalid("Metadata.Sync.Type must be \"Full\" or \"Diff\", got " + PayloadErrors.describe(p));
            }
            String text = p.getText();
            return SyncType.fromContract(text).orElseThrow(() -> invalid(
                    "Metadata.Sync.Type must be \"Full\" or \"Diff\", got " + PayloadErrors.quote(text)));
        }

        private Integer reasonCode() throws IOException {
            if (p.currentToken() == JsonToken.VALUE_NULL) {
                return null;
            }
            if (p.currentToken() != JsonToken.VALUE_NUMBER_INT || p.getNumberType() != JsonParser.NumberType.INT) {
                throw invalid("Metadata.Sync.ReasonCode must be an integer, got " + PayloadErrors.describe(p));
            }
            return p.getIntValue();
        }

        private void data() throws IOException {
            JsonToken t = p.currentToken();
            if (t == JsonToken.VALUE_NULL) {
                return; // json_agg over no rows gives NULL: the same as no Data at all.
            }
            if (t != JsonToken.START_ARRAY) {
                throw invalid("Data must be an array, got " + PayloadErrors.describe(p));
            }
            while ((t = p.nextToken()) != JsonToken.END_ARRAY) {
                if (t != JsonToken.START_OBJECT) {
                    throw invalid("Data[" + rows + "] must be an object, got " + PayloadErrors.describe(p));
                }
                row();
                rows++;
            }
        }

        private void row() throws IOException {
            Long rowVersion = null;
            while (p.nextToken() == JsonToken.FIELD_NAME) {
                String key = p.currentName();
                p.nextToken();
                if (ContractKeys.ROW_VERSION.equals(key)) {
                    Long v = requireLong("Data[" + rows + "].$version", true);
                    rowVersion = v;
                    if (v != null && (highest == null || v > highest)) {
                        highest = v;
                    }
                } else if (ContractKeys.OPERATION.equals(key)) {
                    operation();
                } else if (ContractKeys.CHANGED.equals(key)) {
                    changed();
                } else {
                    p.skipChildren();
                }
            }
            if (rowVersion == null || previous != null && rowVersion < previous) {
                ascending = false;
            }
            previous = rowVersion;
        }

        private void operation() throws IOException {
            JsonToken t = p.currentToken();
            if (t == JsonToken.VALUE_NULL) {
                return;
            }
            if (t != JsonToken.VALUE_STRING || Operation.fromCode(p.getText()).isEmpty()) {
                throw invalid("Data[" + rows + "].$operation must be \"I\", \"U\" or \"D\", got "
                        + PayloadErrors.describe(p));
            }
        }

        private void changed() throws IOException {
            JsonToken t = p.currentToken();
            if (t == JsonToken.VALUE_NULL) {
                return;
            }
            if (t != JsonToken.START_ARRAY) {
                throw invalid("Data[" + rows + "].$changed must be an array of column names, got "
                        + PayloadErrors.describe(p));
            }
            while ((t = p.nextToken()) != JsonToken.END_ARRAY) {
                if (t != JsonToken.VALUE_STRING) {
                    throw invalid("Data[" + rows + "].$changed must hold only column names (strings), got "
                            + PayloadErrors.describe(p));
                }
            }
        }

        /** Reads a 64-bit integer; {@code null} is allowed only where {@code nullable}. */
        private Long requireLong(String where, boolean nullable) throws IOException {
            JsonToken t = p.currentToken();
            if (t == JsonToken.VALUE_NULL) {
                if (nullable) {
                    return null;
                }
                throw invalid(where + " is null; it must be a 64-bit integer");
            }
            if (t != JsonToken.VALUE_NUMBER_INT) {
                throw invalid(where + " must be a 64-bit integer, got " + PayloadErrors.describe(p));
            }
            JsonParser.NumberType nt = p.getNumberType();
            if (nt == JsonParser.NumberType.BIG_INTEGER) {
                throw invalid(where + " does not fit in a 64-bit integer: " + p.getText());
            }
            return p.getLongValue();
        }

        private boolean once(boolean seen, String what) {
            if (seen) {
                throw invalid(what + " appears twice");
            }
            return true;
        }

        private TidemarkException invalid(String problem) {
            return PayloadErrors.invalid(objectName, problem);
        }
    }
}
