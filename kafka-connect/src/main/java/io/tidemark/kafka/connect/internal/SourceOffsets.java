package io.tidemark.kafka.connect.internal;

import io.tidemark.sync.ErrorCode;
import io.tidemark.sync.TidemarkException;

import java.util.HashMap;
import java.util.Map;
import java.util.Optional;
import java.util.OptionalLong;

/**
 * The connector's offsets: the source partition is the object ({@code {"object":"Items"}}), the source offset its
 * version and the procedure that produced it ({@code {"version":1042,"source":"postgres:\"public\".\"items_changes\""}}).
 * A record of a FULL export that is not complete yet carries no {@code version}: a task restarted there starts the
 * export again.
 */
public final class SourceOffsets {

    static final String OBJECT = "object";
    static final String VERSION = "version";
    static final String SOURCE = "source";

    private SourceOffsets() {
    }

    public static Map<String, Object> partition(String objectName) {
        return Map.of(OBJECT, objectName);
    }

    /** The offset of a record: every change up to {@code version} (when present) is in Kafka with it. */
    public static Map<String, Object> offset(String source, OptionalLong version) {
        Map<String, Object> offset = new HashMap<>();
        offset.put(SOURCE, source);
        version.ifPresent(v -> offset.put(VERSION, v));
        return offset;
    }

    /** A committed position read back. */
    public record Position(OptionalLong version, Optional<String> source) {
    }

    /** Reads a committed offset; fails naming the object when it is not one this connector wrote. */
    public static Position read(String objectName, Map<String, Object> offset) {
        if (offset == null) {
            return new Position(OptionalLong.empty(), Optional.empty());
        }
        Object version = offset.get(VERSION);
        Object source = offset.get(SOURCE);
        if (version != null && !(version instanceof Number) || source != null && !(source instanceof String)) {
            throw TidemarkException.forObject(ErrorCode.INVALID_CONFIGURATION, objectName,
                    "the committed Connect offset " + offset + " is not a Tidemark offset ({\"version\": <integer>,"
                            + " \"source\": <text>}); reset or correct the connector's offsets for this object");
        }
        return new Position(version == null ? OptionalLong.empty() : OptionalLong.of(((Number) version).longValue()),
                Optional.ofNullable((String) source));
    }
}
