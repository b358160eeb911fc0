package io.tidemark.sync.internal.contract;

import com.fasterxml.jackson.core.JsonGenerator;
import com.fasterxml.jackson.core.JsonParser;
import com.fasterxml.jackson.core.JsonToken;
import com.fasterxml.jackson.core.util.ByteArrayBuilder;
import io.tidemark.sync.Change;
import io.tidemark.sync.Operation;
import io.tidemark.sync.TidemarkException;
import io.tidemark.sync.internal.Json;
import io.tidemark.sync.internal.payload.ByteArrayPayload;
import io.tidemark.sync.spi.ResponsePayload;

import java.io.IOException;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;

/**
 * The delivering pass: walks to {@code Data} and turns its elements into {@link Change}s, a page at a time.
 * Only one page of changes exists at any moment; the rest of the response stays in the payload.
 *
 * <p>Each element is kept as its JSON bytes; its columns are decoded only if a destination asks. For a payload
 * held as UTF-8 bytes, an element's bytes are cut straight out of it; otherwise they are re-written compactly
 * from the tokens.
 *
 * <p>Runs only over a response {@link ResponseScanner} accepted, so structure errors here are bugs, not input
 * problems.
 */
public final class ChangeReader implements AutoCloseable {

    private final String objectName;
    private final JsonParser p;
    /** The payload's bytes when elements can be sliced out of them, else null. */
    private final byte[] source;
    private final ByteArrayBuilder scratch;
    private boolean inData;
    private boolean finished;

    public ChangeReader(String objectName, ResponsePayload payload) {
        this.objectName = objectName;
        this.source = payload instanceof ByteArrayPayload ? ((ByteArrayPayload) payload).bytes() : null;
        this.scratch = source == null ? new ByteArrayBuilder(512) : null;
        try {
            this.p = payload.openParser(Json.FACTORY);
        } catch (IOException e) {
            throw PayloadErrors.unreadable(objectName, e);
        }
    }

    /** The next up-to-{@code max} changes; an empty list once {@code Data} is exhausted. */
    public List<Change> nextPage(int max) {
        List<Change> page = new ArrayList<>(Math.min(max, 4096));
        try {
            if (!inData && !finished) {
                seekData();
            }
            while (!finished && page.size() < max) {
                JsonToken t = p.nextToken();
                if (t == JsonToken.END_ARRAY) {
                    finished = true;
                    break;
                }
                page.add(source != null ? sliceChange() : rewriteChange());
            }
        } catch (IOException e) {
            throw PayloadErrors.unreadable(objectName, e);
        }
        return page;
    }

    private void seekData() throws IOException {
        if (p.nextToken() != JsonToken.START_OBJECT) {
            throw changedUnderfoot("the response is no longer a JSON object");
        }
        while (p.nextToken() == JsonToken.FIELD_NAME) {
            String key = p.currentName();
            JsonToken value = p.nextToken();
            if (ContractKeys.envelopeKey(key, ContractKeys.DATA)) {
                if (value == JsonToken.START_ARRAY) {
                    inData = true;
                } else {
                    finished = true; // null: no rows
                }
                return;
            }
            p.skipChildren();
        }
        finished = true; // no Data at all: no rows
    }

    /** Reads the contract keys of the element at START_OBJECT and cuts its bytes out of the payload. */
    private Change sliceChange() throws IOException {
        long start = p.currentTokenLocation().getByteOffset();
        ContractValues values = new ContractValues();
        while (p.nextToken() == JsonToken.FIELD_NAME) {
            String key = p.currentName();
            JsonToken t = p.nextToken();
            if (!values.read(key, t)) {
                p.skipChildren();
            }
        }
        long end = p.currentLocation().getByteOffset();
        byte[] raw = Arrays.copyOfRange(source, Math.toIntExact(start), Math.toIntExact(end));
        return Change.fromRaw(values.operation, values.version, values.changed, raw);
    }

    /** Reads the contract keys of the element at START_OBJECT while writing it back compactly. */
    private Change rewriteChange() throws IOException {
        scratch.reset();
        ContractValues values = new ContractValues();
        try (JsonGenerator g = Json.FACTORY.createGenerator(scratch)) {
            g.writeStartObject();
            while (p.nextToken() == JsonToken.FIELD_NAME) {
                String key = p.currentName();
                JsonToken t = p.nextToken();
                g.writeFieldName(key);
                if (values.read(key, t)) {
                    writeContractValue(g, key, values);
                } else {
                    copyValue(g);
                }
            }
            g.writeEndObject();
        }
        return Change.fromRaw(values.operation, values.version, values.changed, scratch.toByteArray());
    }

    /**
     * Copies the value at the current token. Numbers are copied as their text: Jackson's own structure copy
     * writes decimals through a double, which would turn 12.50 into 12.5 and round long decimals.
     */
    private void copyValue(JsonGenerator g) throws IOException {
        int depth = 0;
        do {
            JsonToken t = p.currentToken();
            if (t == JsonToken.VALUE_NUMBER_INT || t == JsonToken.VALUE_NUMBER_FLOAT) {
                g.writeNumber(p.getText());
            } else {
                g.copyCurrentEvent(p);
            }
            if (t.isStructStart()) {
                depth++;
            } else if (t.isStructEnd()) {
                depth--;
            }
        } while (depth > 0 && p.nextToken() != null);
    }

    private static void writeContractValue(JsonGenerator g, String key, ContractValues values) throws IOException {
        if (ContractKeys.ROW_VERSION.equals(key)) {
            if (values.version == null) {
                g.writeNull();
            } else {
                g.writeNumber(values.version);
            }
        } else if (ContractKeys.OPERATION.equals(key)) {
            if (values.operation == null) {
                g.writeNull();
            } else {
                g.writeString(values.operation.code());
            }
        } else if (values.changed == null) {
            g.writeNull();
        } else {
            g.writeStartArray();
            for (String name : values.changed) {
                g.writeString(name);
            }
            g.writeEndArray();
        }
    }

    /** The contract keys of one element, read as they come. */
    private final class ContractValues {
        Operation operation;
        Long version;
        List<String> changed;

        /** Reads the value if {@code key} is a contract key (consuming it) and returns true. */
        boolean read(String key, JsonToken t) throws IOException {
            if (ContractKeys.ROW_VERSION.equals(key)) {
                version = t == JsonToken.VALUE_NULL ? null : p.getLongValue();
                return true;
            }
            if (ContractKeys.OPERATION.equals(key)) {
                operation = t == JsonToken.VALUE_NULL ? null : Operation.fromCode(p.getText())
                        .orElseThrow(() -> changedUnderfoot("an $operation changed between reads"));
                return true;
            }
            if (ContractKeys.CHANGED.equals(key)) {
                if (t == JsonToken.VALUE_NULL) {
                    changed = null;
                } else {
                    List<String> names = new ArrayList<>();
                    while (p.nextToken() != JsonToken.END_ARRAY) {
                        names.add(p.getText());
                    }
                    changed = names;
                }
                return true;
            }
            return false;
        }
    }

    private TidemarkException changedUnderfoot(String what) {
        return PayloadErrors.invalid(objectName, what + " (the response changed between the checking and the delivering read)");
    }

    @Override
    public void close() {
        try {
            p.close();
        } catch (IOException e) {
            throw PayloadErrors.unreadable(objectName, e);
        }
    }
}
