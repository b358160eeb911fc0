package io.tidemark.postgres.internal.logical;

import io.tidemark.sync.TrackedObject;
import io.tidemark.sync.internal.sql.PgName;
import io.tidemark.sync.spi.WatermarkState;
import io.tidemark.sync.spi.WatermarkStore;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.time.Duration;
import java.util.Collection;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.function.Consumer;

/**
 * Who reads a slot's tables: the tracked objects, the table each reads, and where each stands. It answers the
 * stream's two questions: which objects to wake when a table commits, and how far the slot may move (the lowest
 * watermark the objects stored, read from the engine's store), releasing from each table's log what every one of
 * its readers has stored.
 */
public final class SlotReaders {

    private static final Logger LOG = LoggerFactory.getLogger(SlotReaders.class);

    /** An object reading a table; its source identity tells its stored watermarks from another source's. */
    private record Reader(PgName table, String source) {
    }

    private final WatermarkStore store;
    private final Map<PgName, TableLog> logs = new HashMap<>();
    private final Map<String, Reader> readers = new ConcurrentHashMap<>();
    /** The position an object was seeded at, until its store holds a watermark of this source. */
    private final Map<String, Long> seeds = new ConcurrentHashMap<>();
    private final List<Subscription> subscriptions = new CopyOnWriteArrayList<>();
    private volatile long lastAcknowledged;
    /** The object whose stored watermark (or seed) was the lowest at the last acknowledgement, or null. */
    private volatile String holder;

    public SlotReaders(WatermarkStore store, List<PgName> tables) {
        this.store = store;
        for (PgName table : tables) {
            logs.put(table, new TableLog());
        }
    }

    /** The logs, by captured table. */
    public Map<PgName, TableLog> logs() {
        return logs;
    }

    public TableLog log(PgName table) {
        return logs.get(table);
    }

    public void register(String objectName, PgName table, String source) {
        readers.put(objectName, new Reader(table, source));
    }

    /**
     * The object is read no more (untracked live): it holds nothing from now on, so the slot and its table's log
     * may move past its stored watermark at the next acknowledgement. Tracked again, it registers again; a
     * watermark below what the log then holds gets the table whole rather than a gap.
     */
    public void unregister(String objectName) {
        readers.remove(objectName);
        seeds.remove(objectName);
    }

    /** The object was seeded at {@code position}: hold the table's changes after it until its watermark is stored. */
    public void seeded(String objectName, long position) {
        seeds.put(objectName, position);
    }

    /** The seed (or an export's hold) of an object came to nothing: it holds nothing any more. */
    public void unseeded(String objectName) {
        seeds.remove(objectName);
    }

    /**
     * Wakes {@code objects} when their tables commit, each at most once per {@code interval} (see
     * {@link WakeUpThrottle}); zero wakes at every commit.
     */
    public AutoCloseable subscribe(Collection<TrackedObject> objects, Consumer<String> wakeUp, Duration interval) {
        Map<PgName, List<String>> byTable = new HashMap<>();
        for (TrackedObject object : objects) {
            Reader reader = readers.get(object.name());
            if (reader != null) {
                byTable.computeIfAbsent(reader.table(), t -> new CopyOnWriteArrayList<>()).add(object.name());
            }
        }
        WakeUpThrottle throttle = new WakeUpThrottle(interval, wakeUp);
        Subscription subscription = new Subscription(byTable, throttle);
        subscriptions.add(subscription);
        return () -> {
            subscriptions.remove(subscription);
            throttle.close();
        };
    }

    /** Called by the stream once a commit's changes of {@code table} are in its log. */
    public void committed(PgName table) {
        for (Subscription s : subscriptions) {
            List<String> names = s.byTable().get(table);
            if (names == null) {
                continue;
            }
            for (String name : names) {
                try {
                    s.throttle().wake(name);
                } catch (RuntimeException e) {
                    // A wake-up is a hint (the poll interval is the safety net); the stream must not stop for it.
                    LOG.warn("Waking {} after a commit of {} failed: {}", name, table, e.toString());
                }
            }
        }
    }

    /**
     * How far the slot may move: for each table, the lowest watermark its readers stored (an object not stored yet
     * holds at its seed), never above {@code position}; each table's log releases what lies at or below its own
     * floor. When the store cannot be read, nothing moves.
     */
    public long acknowledged(long position) {
        Map<String, WatermarkState> states;
        try {
            states = store.loadAll();
        } catch (RuntimeException e) {
            LOG.warn("Could not read the stored watermarks to move the replication slot; it stays at {}: {}",
                    lastAcknowledged, e.toString());
            return lastAcknowledged;
        }
        Map<PgName, Long> floors = new HashMap<>();
        for (PgName table : logs.keySet()) {
            floors.put(table, position);
        }
        long lowest = Long.MAX_VALUE;
        String lowestName = null;
        for (Map.Entry<String, Reader> e : readers.entrySet()) {
            Long held = heldAt(e.getKey(), e.getValue(), states.get(e.getKey()));
            if (held != null) {
                floors.merge(e.getValue().table(), held, Math::min);
                if (held < lowest) {
                    lowest = held;
                    lowestName = e.getKey();
                }
            }
        }
        holder = lowestName;
        long ack = position;
        for (Map.Entry<PgName, Long> floor : floors.entrySet()) {
            logs.get(floor.getKey()).release(floor.getValue());
            ack = Math.min(ack, floor.getValue());
        }
        lastAcknowledged = Math.max(lastAcknowledged, ack);
        return lastAcknowledged;
    }

    /** The object whose stored watermark held the slot back at the last acknowledgement, or null. */
    public String holder() {
        return holder;
    }

    /** The version an object holds its table's log at: its stored watermark of this source, else its seed. */
    private Long heldAt(String name, Reader reader, WatermarkState state) {
        if (state != null && state.version().isPresent()) {
            Optional<String> source = state.source();
            if (source.isEmpty() || source.get().equals(reader.source())) {
                seeds.remove(name);
                return state.version().getAsLong();
            }
        }
        return seeds.get(name);
    }


    private record Subscription(Map<PgName, List<String>> byTable, WakeUpThrottle throttle) {
    }
}
