package io.tidemark.sync.internal.engine;

import org.slf4j.MDC;

import java.util.LinkedHashMap;
import java.util.Map;

/**
 * The SLF4J MDC keys the engine sets, so that every line logged during a cycle or a delivery (the engine's, a
 * provider's, a destination's, the host's own) can be filtered by object, destination and page: set on entry,
 * and on {@link #close()} put back as they were (nothing is left behind on a pooled thread).
 */
final class LogContext implements AutoCloseable {

    /** The engine's name, during a cycle. */
    static final String ENGINE = "tidemark.engine";
    /** The tracked object's name, during its cycle. */
    static final String OBJECT = "tidemark.object";
    /** The destination's name, while a page is offered to it. */
    static final String DESTINATION = "tidemark.destination";
    /** The page's idempotency key ({@code ChangeBatch.idempotencyKey()}), while it is offered to a destination. */
    static final String BATCH = "tidemark.batch";

    private final Map<String, String> previous = new LinkedHashMap<>();

    private LogContext(String... keysAndValues) {
        for (int i = 0; i < keysAndValues.length; i += 2) {
            previous.put(keysAndValues[i], MDC.get(keysAndValues[i]));
            MDC.put(keysAndValues[i], keysAndValues[i + 1]);
        }
    }

    static LogContext cycle(String engineName, String objectName) {
        return new LogContext(ENGINE, engineName, OBJECT, objectName);
    }

    static LogContext delivery(String destination, String batchId) {
        return new LogContext(DESTINATION, destination, BATCH, batchId);
    }

    @Override
    public void close() {
        previous.forEach((key, value) -> {
            if (value == null) {
                MDC.remove(key);
            } else {
                MDC.put(key, value);
            }
        });
    }
}
