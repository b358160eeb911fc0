package io.tidemark.sync.internal.contract;

import com.fasterxml.jackson.core.JsonParser;
import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.core.JsonToken;
import io.tidemark.sync.ErrorCode;
import io.tidemark.sync.TidemarkException;
import io.tidemark.sync.spi.ResponsePayload;

import java.io.IOException;

/** Turns problems found in a response into errors that name the object, the place and the problem. */
final class PayloadErrors {

    /** How much of a malformed payload the error shows from each end. */
    static final int PREVIEW_CHARS = 200;

    private PayloadErrors() {
    }

    static TidemarkException malformed(String objectName, ResponsePayload payload, JsonProcessingException e) {
        String problem = e.getOriginalMessage();
        long offset = e.getLocation() == null ? -1 : e.getLocation().getCharOffset();
        if (offset < 0 && e.getLocation() != null) {
            offset = e.getLocation().getByteOffset();
        }
        return TidemarkException.forObject(ErrorCode.MALFORMED_JSON, objectName,
                "the procedure returned malformed JSON (" + problem
                        + (offset >= 0 ? " at offset " + offset : "") + "). Payload length: " + payload.size()
                        + " " + payload.sizeUnit() + "; first " + PREVIEW_CHARS + " characters: "
                        + quote(payload.head(PREVIEW_CHARS)) + "; last " + PREVIEW_CHARS + " characters: "
                        + quote(payload.tail(PREVIEW_CHARS)) + ". Nothing was delivered and the watermark did not move.",
                e);
    }

    static TidemarkException invalid(String objectName, String problem) {
        return TidemarkException.forObject(ErrorCode.INVALID_RESPONSE, objectName,
                "the response breaks the procedure contract: " + problem
                        + ". Nothing was delivered and the watermark did not move.");
    }

    static TidemarkException empty(String objectName) {
        return TidemarkException.forObject(ErrorCode.EMPTY_RESPONSE, objectName,
                "the procedure returned an empty response (no row, NULL or an empty string); it must return one "
                        + "JSON document with Metadata.Sync.Version. Nothing was delivered and the watermark did not move.");
    }

    static TidemarkException unreadable(String objectName, IOException e) {
        return TidemarkException.forObject(ErrorCode.INTERNAL, objectName,
                "could not read the response: " + e.getMessage(), e);
    }

    /** A short description of the value at the parser's current token, for "got ..." in messages. */
    static String describe(JsonParser p) throws IOException {
        JsonToken t = p.currentToken();
        if (t == null) {
            return "end of input";
        }
        switch (t) {
            case VALUE_STRING:
                return "the string " + quote(abbreviate(p.getText()));
            case VALUE_NUMBER_INT:
            case VALUE_NUMBER_FLOAT:
                return "the number " + abbreviate(p.getText());
            case VALUE_TRUE:
            case VALUE_FALSE:
                return "the boolean " + p.getText();
            case VALUE_NULL:
                return "null";
            case START_OBJECT:
                return "an object";
            case START_ARRAY:
                return "an array";
            default:
                return t.name();
        }
    }

    private static String abbreviate(String s) {
        return s.length() <= 60 ? s : s.substring(0, 57) + "...";
    }

    static String quote(String s) {
        return '"' + s.replace("\\", "\\\\").replace("\"", "\\\"").replace("\n", "\\n").replace("\r", "\\r") + '"';
    }
}
