package io.tidemark.sync;

import io.tidemark.sync.spi.DeadLetter;
import io.tidemark.sync.spi.DeadLetterStore;

import java.time.Instant;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.function.Predicate;

/**
 * Dead letters in memory, for tests and throw-away runs (a destination with {@link DeliveryPolicy#deadLetterAfter}
 * needs a dead-letter store). Lost when the JVM ends; {@link JdbcDeadLetterStore} keeps them in the database.
 * Every operation holds the store's lock, so claims are as exclusive as the database store's within one JVM.
 */
public final class InMemoryDeadLetterStore implements DeadLetterStore {

    /** Version order, as the SPI defines it. */
    static final Comparator<DeadLetter> VERSION_ORDER = Comparator.comparingLong(DeadLetter::fromVersion)
            .thenComparingInt(DeadLetter::pageNumber).thenComparingLong(DeadLetter::id);

    private long lastId;
    private final Map<Long, Entry> letters = new HashMap<>();

    /** A stored letter and its claim, if any. */
    private record Entry(DeadLetter letter, String claimant, Instant until) {
        boolean claimedByOtherThan(String who, Instant now) {
            return claimant != null && !claimant.equals(who) && until.isAfter(now);
        }

        boolean isFree(Instant now) {
            return claimant == null || !until.isAfter(now);
        }

        Entry claimedBy(String who, Instant until) {
            return new Entry(letter, who, until);
        }

        Entry unclaimed(DeadLetter newLetter) {
            return new Entry(newLetter, null, null);
        }
    }

    private InMemoryDeadLetterStore() {
    }

    /** An empty store. */
    public static InMemoryDeadLetterStore create() {
        return new InMemoryDeadLetterStore();
    }

    @Override
    public synchronized DeadLetter record(DeadLetter letter) {
        Objects.requireNonNull(letter, "letter");
        Optional<Map.Entry<Long, Entry>> same = letters.entrySet().stream()
                .filter(e -> samePage(e.getValue().letter(), letter)).findFirst();
        if (same.isPresent()) {
            Entry entry = same.get().getValue();
            DeadLetter merged = entry.letter().mergedWith(letter);
            letters.put(merged.id(), new Entry(merged, entry.claimant(), entry.until()));
            return merged;
        }
        DeadLetter stored = letter.withId(++lastId);
        letters.put(stored.id(), new Entry(stored, null, null));
        return stored;
    }

    private static boolean samePage(DeadLetter a, DeadLetter b) {
        return a.objectName().equals(b.objectName()) && a.destination().equals(b.destination())
                && a.idempotencyKey().equals(b.idempotencyKey());
    }

    @Override
    public synchronized List<DeadLetter> list(String objectName) {
        return select(l -> l.objectName().equals(objectName));
    }

    @Override
    public synchronized List<DeadLetter> list(String objectName, String destination) {
        return select(l -> l.objectName().equals(objectName) && l.destination().equals(destination));
    }

    private List<DeadLetter> select(Predicate<DeadLetter> which) {
        return letters.values().stream().map(Entry::letter).filter(which).sorted(VERSION_ORDER).toList();
    }

    @Override
    public synchronized Optional<DeadLetter> find(long id) {
        return Optional.ofNullable(letters.get(id)).map(Entry::letter);
    }

    @Override
    public synchronized Optional<DeadLetter> claim(long id, String claimant, Instant now, Instant until) {
        Entry entry = letters.get(id);
        if (entry == null || !entry.isFree(now)) {
            return Optional.empty();
        }
        letters.put(id, entry.claimedBy(claimant, until));
        return Optional.of(entry.letter());
    }

    @Override
    public synchronized List<DeadLetter> claimNext(String objectName, String destination, String claimant,
                                                   Instant now, Instant until, int limit) {
        List<Entry> ofDestination = letters.values().stream()
                .filter(e -> e.letter().objectName().equals(objectName)
                        && e.letter().destination().equals(destination))
                .toList();
        if (ofDestination.stream().anyMatch(e -> e.claimedByOtherThan(claimant, now))) {
            return List.of();
        }
        List<DeadLetter> claimed = new ArrayList<>();
        ofDestination.stream().filter(e -> e.isFree(now)).map(Entry::letter).sorted(VERSION_ORDER).limit(limit)
                .forEach(letter -> {
                    letters.put(letter.id(), letters.get(letter.id()).claimedBy(claimant, until));
                    claimed.add(letter);
                });
        return claimed;
    }

    @Override
    public synchronized boolean resolve(long id, String claimant) {
        Entry entry = letters.get(id);
        if (entry == null || !claimant.equals(entry.claimant())) {
            return false;
        }
        letters.remove(id);
        return true;
    }

    @Override
    public synchronized boolean resolve(String objectName, String destination, String idempotencyKey) {
        return letters.values().removeIf(e -> e.letter().objectName().equals(objectName)
                && e.letter().destination().equals(destination)
                && e.letter().idempotencyKey().equals(idempotencyKey));
    }

    @Override
    public synchronized boolean release(long id, String claimant) {
        Entry entry = letters.get(id);
        if (entry == null || !claimant.equals(entry.claimant())) {
            return false;
        }
        letters.put(id, entry.unclaimed(entry.letter()));
        return true;
    }

    @Override
    public synchronized boolean releaseFailed(long id, String claimant, DeadLetter.Failure failure) {
        Entry entry = letters.get(id);
        if (entry == null || !claimant.equals(entry.claimant())) {
            return false;
        }
        letters.put(id, entry.unclaimed(entry.letter().withFailure(failure)));
        return true;
    }

    @Override
    public synchronized boolean delete(long id) {
        return letters.remove(id) != null;
    }

    @Override
    public synchronized int purge(Instant olderThan) {
        int before = letters.size();
        letters.values().removeIf(e -> e.letter().lastFailedAt().isBefore(olderThan));
        return before - letters.size();
    }
}
