package io.tidemark.sync.internal.engine;

import io.tidemark.sync.ChangeBatch;
import io.tidemark.sync.spi.DeadLetterStore;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;

/**
 * The dead letters recorded for pages a destination refused under {@code BLOCK}: there the letter is a record of
 * the failure (its attempts and errors), not the only copy of the changes, which stay behind the destination's
 * position and are offered again. Once the destination's position has passed a letter's changes it accepted them,
 * and the letter is resolved. Kept in memory: letters recorded before a restart stay until replayed or purged.
 */
final class BlockedLetters {

    private static final Logger LOG = LoggerFactory.getLogger(BlockedLetters.class);

    /** Per object and destination: each recorded letter's idempotency key and the highest version it holds. */
    private final Map<String, Map<String, Long>> recorded = new ConcurrentHashMap<>();

    void recorded(String objectName, String destination, ChangeBatch batch) {
        long upTo = batch.changes().stream().mapToLong(c -> c.version().orElse(batch.toVersion())).max()
                .orElse(batch.toVersion());
        recorded.computeIfAbsent(key(objectName, destination), k -> new ConcurrentHashMap<>())
                .put(batch.idempotencyKey(), upTo);
    }

    /** Resolves the letters of {@code destination} whose changes lie at or below its new {@code position}. */
    void passed(DeadLetterStore store, String objectName, String destination, long position) {
        Map<String, Long> letters = recorded.get(key(objectName, destination));
        if (letters == null || letters.isEmpty() || store == null) {
            return;
        }
        letters.entrySet().removeIf(letter -> {
            if (letter.getValue() > position) {
                return false;
            }
            try {
                store.resolve(objectName, destination, letter.getKey());
            } catch (RuntimeException e) {
                // A letter that could not be deleted stays in the store, where replay or purge deal with it.
                LOG.warn("[{}] could not resolve the dead letter of destination '{}' for page {}: {}", objectName,
                        destination, letter.getKey(), e.toString());
            }
            return true;
        });
    }

    private static String key(String objectName, String destination) {
        return objectName + '\u0000' + destination;
    }
}
