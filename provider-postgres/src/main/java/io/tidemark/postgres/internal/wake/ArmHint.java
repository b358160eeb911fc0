package io.tidemark.postgres.internal.wake;

import com.fasterxml.jackson.core.JsonParser;
import com.fasterxml.jackson.core.JsonToken;
import io.tidemark.sync.internal.Json;

import java.io.IOException;
import java.util.Optional;

/**
 * Reads what a generated outbox with wake-ups says about arming, from the start of a change function's response:
 * {@code Metadata.Outbox.Arm} (the function a reader calls before it waits), {@code Metadata.Outbox.Horizon} and
 * {@code Metadata.Sync.Version}, and whether {@code Data}, which follows, holds a change. Only a response that starts
 * with {@code Metadata} is looked at, and reading stops at {@code Data}'s first element, so the cost does not grow
 * with the response.
 */
public final class ArmHint {

    /**
     * @param armFunction the arm function as the response names it ({@code public.items_outbox_arm})
     * @param horizon     the transaction horizon the read used: every transaction below it had ended
     * @param version     the version the read ends at
     * @param changes     whether the read returned a change ({@code Data} not empty)
     */
    public record Read(String armFunction, long horizon, long version, boolean changes) {

        /** Whether the read returned every change below its horizon (no page was cut short by maxRows). */
        public boolean reachedHorizon() {
            return version >= horizon - 1;
        }
    }

    private ArmHint() {
    }

    public static Optional<Read> read(byte[] response) {
        if (response == null || response.length == 0) {
            return Optional.empty();
        }
        try (JsonParser p = Json.FACTORY.createParser(response)) {
            if (p.nextToken() != JsonToken.START_OBJECT || p.nextToken() != JsonToken.FIELD_NAME
                    || !"Metadata".equals(p.currentName()) || p.nextToken() != JsonToken.START_OBJECT) {
                return Optional.empty();
            }
            String arm = null;
            Long horizon = null;
            Long version = null;
            while (p.nextToken() == JsonToken.FIELD_NAME) {
                String key = p.currentName();
                JsonToken value = p.nextToken();
                if (("Outbox".equals(key) || "Sync".equals(key)) && value == JsonToken.START_OBJECT) {
                    while (p.nextToken() == JsonToken.FIELD_NAME) {
                        String member = key + "." + p.currentName();
                        JsonToken v = p.nextToken();
                        if ("Outbox.Arm".equals(member) && v == JsonToken.VALUE_STRING) {
                            arm = p.getText();
                        } else if ("Outbox.Horizon".equals(member) && v == JsonToken.VALUE_NUMBER_INT) {
                            horizon = p.getLongValue();
                        } else if ("Sync.Version".equals(member) && v == JsonToken.VALUE_NUMBER_INT) {
                            version = p.getLongValue();
                        } else {
                            p.skipChildren();
                        }
                    }
                } else {
                    p.skipChildren();
                }
            }
            return arm == null || horizon == null || version == null ? Optional.empty()
                    : Optional.of(new Read(arm, horizon, version, dataHoldsAChange(p)));
        } catch (IOException e) {
            return Optional.empty(); // the engine reports malformed responses; this is only a hint
        }
    }

    /** After {@code Metadata}: whether the {@code Data} array that follows has a first element. */
    private static boolean dataHoldsAChange(JsonParser p) throws IOException {
        while (p.nextToken() == JsonToken.FIELD_NAME) {
            boolean data = "Data".equals(p.currentName());
            JsonToken value = p.nextToken();
            if (data) {
                return value == JsonToken.START_ARRAY && p.nextToken() != JsonToken.END_ARRAY;
            }
            p.skipChildren();
        }
        return false;
    }
}
