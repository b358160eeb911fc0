package io.tidemark.sync;

import io.tidemark.sync.spi.DeadLetter;
import io.tidemark.sync.spi.DeadLetterStore;

import java.util.List;
import java.util.concurrent.ConcurrentSkipListMap;
import java.util.concurrent.atomic.AtomicLong;
import java.util.stream.Collectors;

/**
 * Dead letters in memory, ordered by id, for tests and throw-away runs (a destination with
 * {@link DeliveryPolicy#deadLetterAfter} needs a dead-letter store). Lost when the JVM ends;
 * {@link JdbcDeadLetterStore} keeps them in the database.
 */
public final class InMemoryDeadLetterStore implements DeadLetterStore {

    private final AtomicLong ids = new AtomicLong();
    private final ConcurrentSkipListMap<Long, DeadLetter> letters = new ConcurrentSkipListMap<>();

    private InMemoryDeadLetterStore() {
    }

    /** An empty store. */
    public static InMemoryDeadLetterStore create() {
        return new InMemoryDeadLetterStore();
    }

    @Override
    public DeadLetter add(DeadLetter letter) {
        DeadLetter stored = letter.withId(ids.incrementAndGet());
        letters.put(stored.id(), stored);
        return stored;
    }

    @Override
    public List<DeadLetter> list(String objectName) {
        return letters.values().stream()
                .filter(l -> l.objectName().equals(objectName))
                .collect(Collectors.toUnmodifiableList());
    }

    @Override
    public boolean delete(long id) {
        return letters.remove(id) != null;
    }
}
