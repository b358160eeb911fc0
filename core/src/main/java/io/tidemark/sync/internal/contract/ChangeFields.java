package io.tidemark.sync.internal.contract;

import com.fasterxml.jackson.core.JsonParser;
import com.fasterxml.jackson.core.JsonToken;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.BooleanNode;
import com.fasterxml.jackson.databind.node.NullNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import com.fasterxml.jackson.databind.node.TextNode;
import io.tidemark.sync.ErrorCode;
import io.tidemark.sync.TidemarkException;
import io.tidemark.sync.internal.Json;

import java.io.IOException;

/** Decodes a change's own columns (everything but the contract keys) from its JSON, on first use. */
public final class ChangeFields {

    private ChangeFields() {
    }

    public static ObjectNode parse(byte[] elementUtf8) {
        try (JsonParser p = Json.FACTORY.createParser(elementUtf8)) {
            if (p.nextToken() != JsonToken.START_OBJECT) {
                throw new IllegalStateException("a change is not a JSON object");
            }
            ObjectNode fields = Json.NODES.objectNode();
            while (p.nextToken() == JsonToken.FIELD_NAME) {
                String key = p.currentName();
                JsonToken t = p.nextToken();
                if (ContractKeys.isContractKey(key)) {
                    p.skipChildren();
                } else {
                    fields.set(key, readValue(p, t));
                }
            }
            return fields;
        } catch (IOException | IllegalStateException e) {
            throw new TidemarkException(ErrorCode.INTERNAL, "Could not decode a change that was already checked: " + e, e);
        }
    }

    /** Scalars are built directly (the common case, and cheaper); objects and arrays go through the mapper. */
    static JsonNode readValue(JsonParser p, JsonToken t) throws IOException {
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
}
