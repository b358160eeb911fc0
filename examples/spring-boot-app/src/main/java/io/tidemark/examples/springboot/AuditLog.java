package io.tidemark.examples.springboot;

import io.tidemark.sync.Change;
import io.tidemark.sync.ChangeBatch;
import io.tidemark.sync.spi.Destination;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import org.springframework.stereotype.Component;

import java.util.ArrayList;
import java.util.Deque;
import java.util.List;
import java.util.concurrent.ConcurrentLinkedDeque;

/**
 * The destination "audit" of application.yml: a bean, picked up by its name. It logs each change and keeps the last
 * hundred for {@code GET /audit}. Returning accepts the batch; throwing would refuse it (the engine offers it again).
 */
@Component("audit")
public class AuditLog implements Destination {

    private static final Logger LOG = LoggerFactory.getLogger(AuditLog.class);
    private static final int KEPT = 100;

    private final Deque<String> recent = new ConcurrentLinkedDeque<>();

    @Override
    public void deliver(ChangeBatch batch) {
        for (Change change : batch.changes()) {
            String line = change.operation().map(Enum::name).orElse("ROW") + " "
                    + change.field("item_code").map(code -> code.asText()).orElse("?") + " at version "
                    + change.version();
            LOG.info("audit: {}", line);
            recent.addLast(line);
            while (recent.size() > KEPT) {
                recent.pollFirst();
            }
        }
    }

    public List<String> recent() {
        return new ArrayList<>(recent);
    }
}
