package io.tidemark.sync.internal.contract;

import com.fasterxml.jackson.core.JsonParser;
import com.fasterxml.jackson.core.JsonToken;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.BooleanNode;
import com.fasterxml.jackson.databind.node.NullNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import com.fasterxml.jackson.databind.node.TextNode;
import io.tidemark.sync.Change;
import io.tidemark.sync.Operation;
import io.tidemark.sync.TidemarkException;
import io.tidemark.sync.internal.Json;
import io.tidemark.sync.spi.ResponsePayload;

import java.io.IOException;
import java.util.ArrayList;
import java.util.List;

/**
 * The delivering pass: walks to {@code Data} and turns its elements into {@link Change}s, a page at a time.
 * Only one page of changes exists at any moment; the rest of the response stays in the payload.
 *
 * <p>Runs only over a response {@link ResponseScanner} accepted, so structure errors here are bugs, not input
 * problems.
 */
public final class ChangeReader implements AutoCloseable {

    private final String objectName;
    private final JsonParser p;
    private boolean inData;
    private boolean finished;

    public ChangeReader(String objectName, ResponsePayload payload) {
        this.objectName = objectName;
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
                page.add(readChange());
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

    private Change readChange() throws IOException {
        Operation operation = null;
        Long version = null;
        List<String> changed = null;
        ObjectNode fields = Json.NODES.objectNode();
        while (p.nextToken() == JsonToken.FIELD_NAME) {
            String key = p.currentName();
            JsonToken t = p.nextToken();
            if (ContractKeys.ROW_VERSION.equals(key)) {
                version = t == JsonToken.VALUE_NULL ? null : p.getLongValue();
            } else if (ContractKeys.OPERATION.equals(key)) {
                operation = t == JsonToken.VALUE_NULL ? null : Operation.fromCode(p.getText()).orElseThrow(
                        () -> changedUnderfoot("an $operation changed between reads"));
            } else if (ContractKeys.CHANGED.equals(key)) {
                changed = t == JsonToken.VALUE_NULL ? null : readNames();
            } else {
                fields.set(key, readValue(t));
            }
        }
        return new Change(operation, version, changed, fields);
    }

    private List<String> readNames() throws IOException {
        List<String> names = new ArrayList<>();
        while (p.nextToken() != JsonToken.END_ARRAY) {
            names.add(p.getText());
        }
        return names;
    }

    /** Scalars are built directly (the common case, and cheaper); objects and arrays go through the mapper. */
    private JsonNode readValue(JsonToken t) throws IOException {
        switch (t) {
            case VALUE_STRING:
                return TextNode.valueOf(p.getText());
            case VALUE_NUMBER_INT:
                switch (p.getNumberType()) {
                    case INT:
                        return Json.NODES.numberNode(p.getIntValue());
                    case LONG:
                        return Json.NODES.numberNode(p.getLongValue());
                    default:
                        return Json.NODES.numberNode(p.getBigIntegerValue());
                }
            case VALUE_NUMBER_FLOAT:
                return Json.NODES.numberNode(p.getDecimalValue());
            case VALUE_TRUE:
                return BooleanNode.TRUE;
            case VALUE_FALSE:
                return BooleanNode.FALSE;
            case VALUE_NULL:
                return NullNode.getInstance();
            default:
                return Json.MAPPER.readTree(p);
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
