package io.tidemark.kafka.connect;

import io.tidemark.kafka.connect.internal.ObjectCursor;
import io.tidemark.kafka.connect.internal.Providers;
import io.tidemark.kafka.connect.internal.RecordMapper;
import io.tidemark.kafka.connect.internal.SourceOffsets;
import io.tidemark.kafka.connect.internal.WakeUps;
import io.tidemark.sync.ErrorCode;
import io.tidemark.sync.TidemarkException;
import io.tidemark.sync.TrackedObject;
import io.tidemark.sync.internal.engine.CallRules;
import io.tidemark.sync.internal.engine.EngineCallContext;
import io.tidemark.sync.spi.ChangeProvider;
import org.apache.kafka.connect.errors.ConnectException;
import org.apache.kafka.connect.errors.RetriableException;
import org.apache.kafka.connect.source.SourceRecord;
import org.apache.kafka.connect.source.SourceTask;
import org.apache.kafka.connect.source.TransactionContext;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import java.util.Optional;

/**
 * Calls the procedures of the objects assigned to it, one object per {@link #poll()}, and hands their changes to
 * Connect as records whose offsets are the objects' versions (see {@link ObjectCursor} for the version rules).
 *
 * <p>Resumes each object from its committed offset. With exactly-once support and {@code transaction.boundary}
 * {@code connector}, it commits a transaction at each version boundary (a {@code Full} re-export as a whole); with
 * the {@code poll} boundary each poll is a transaction and ends at a version boundary too.
 *
 * <p>Objects are stepped in turn. With connector-defined boundaries, though, an object whose step did not end at a
 * version boundary (a {@code Full} export longer than one step) holds the task until its response is finished:
 * another object's records would otherwise join the open transaction, and its commit would commit the part of the
 * export sent so far. So every transaction holds the records of one object, from one version boundary to the next.
 */
public class TidemarkSourceTask extends SourceTask {

    private static final Logger LOG = LoggerFactory.getLogger(TidemarkSourceTask.class);
    /** The longest one poll() waits for work, so that a stopping task returns promptly. */
    private static final Duration MAX_WAIT = Duration.ofMillis(500);

    private final Object work = new Object();
    /** Cancels the procedure call in flight when Connect stops the task, as the engine does at close. */
    private final EngineCallContext calls = new EngineCallContext();
    private TidemarkSourceConfig config;
    private ChangeProvider provider;
    private AutoCloseable subscription;
    private final List<Slot> slots = new ArrayList<>();
    private final WakeUps wakeUps = new WakeUps();
    private int next;
    /**
     * With connector-defined transaction boundaries: the object whose last step left its transaction open (a
     * response not yet at a version boundary); only it is stepped until it reaches one. Null otherwise.
     */
    private Slot holding;
    private volatile boolean stopping;

    @Override
    public String version() {
        return TidemarkSourceConnector.VERSION;
    }

    @Override
    public void start(Map<String, String> props) {
        config = new TidemarkSourceConfig(props);
        Map<String, ObjectSettings> all = config.objectsByName();
        List<ObjectSettings> mine = new ArrayList<>();
        for (String name : Arrays.asList(props.getOrDefault(TidemarkSourceConfig.TASK_OBJECTS, "").split(","))) {
            if (!name.isBlank()) {
                mine.add(Optional.ofNullable(all.get(name.trim())).orElseThrow(() -> new ConnectException(
                        "the task was assigned object '" + name + "', which " + TidemarkSourceConfig.OBJECTS
                                + " does not list")));
            }
        }
        provider = Providers.create(config);
        try {
            List<Map<String, Object>> partitions = mine.stream()
                    .map(s -> SourceOffsets.partition(s.object().name())).toList();
            Map<Map<String, Object>, Map<String, Object>> offsets =
                    context.offsetStorageReader().offsets(partitions);
            for (ObjectSettings settings : mine) {
                TrackedObject object = settings.object();
                provider.validate(object);
                String source = provider.sourceIdentity(object);
                SourceOffsets.Position committed = SourceOffsets.read(object.name(),
                        offsets.get(SourceOffsets.partition(object.name())));
                if (CallRules.sourceChanged(committed.version(), committed.source(), source)) {
                    throw TidemarkException.forObject(ErrorCode.WATERMARK_SOURCE_CHANGED, object.name(),
                            "the committed offset " + committed.version().getAsLong() + " was produced by "
                                    + committed.source().get() + ", but the object now calls " + source
                                    + "; nothing was called. Point object." + object.name() + ".procedure back,"
                                    + " or reset the connector's offsets for this object to start it again");
                }
                LOG.info("[{}] starting from {}", object.name(), committed.version().isPresent()
                        ? "committed version " + committed.version().getAsLong() : "no committed offset ("
                        + object.initialSync() + ")");
                slots.add(new Slot(new ObjectCursor(object, provider, calls, config.pageSize(),
                        committed.version()), new RecordMapper(settings, source, config.deleteTombstones())));
            }
            subscription = provider.subscribe(mine.stream().map(ObjectSettings::object).toList(), wakeUps::wake);
        } catch (TidemarkException e) {
            provider.close();
            throw new ConnectException(e.getMessage(), e);
        }
    }

    @Override
    public List<SourceRecord> poll() throws InterruptedException {
        if (stopping || slots.isEmpty()) {
            wakeUps.await(MAX_WAIT);
            return null;
        }
        synchronized (work) {
            if (holding != null && !stopping) {
                // Not due-checked and not woken: the open transaction waits for the rest of this response.
                List<SourceRecord> records = step(holding);
                return records.isEmpty() ? null : records;
            }
            long now = System.nanoTime();
            for (int tried = 0; tried < slots.size() && !stopping; tried++) {
                Slot slot = slots.get(next);
                next = (next + 1) % slots.size();
                // A wake-up is taken only by the step that calls the provider: one arriving while a response is
                // handed out stays for the call after it (the outbox notifies once per arming, not per commit).
                boolean inResponse = slot.cursor.inResponse();
                boolean woken = !inResponse && wakeUps.take(slot.cursor.object().name());
                if (!inResponse && !woken && now < slot.dueNanos) {
                    continue;
                }
                List<SourceRecord> records = step(slot);
                if (!records.isEmpty()) {
                    return records;
                }
            }
        }
        long nextDue = slots.stream().mapToLong(s -> s.dueNanos).min().orElse(System.nanoTime());
        long waitNanos = Math.min(MAX_WAIT.toNanos(), Math.max(0, nextDue - System.nanoTime()));
        wakeUps.await(Duration.ofNanos(waitNanos));
        return null;
    }

    /**
     * One step of one object; schedules its next call when it had nothing, and with connector-defined transaction
     * boundaries commits at the step's version boundary or, when the step ended inside a response, holds the task
     * for this object.
     */
    private List<SourceRecord> step(Slot slot) {
        TrackedObject object = slot.cursor.object();
        TransactionContext transactions = context.transactionContext();
        boolean held = holding == slot;
        holding = null;
        ObjectCursor.Step step;
        try {
            step = slot.cursor.next();
        } catch (TidemarkException e) {
            slot.cursor.close();
            if (stopping) {
                return List.of(); // the call was cancelled because Connect stops the task
            }
            slot.dueNanos = System.nanoTime() + config.pollInterval().toNanos();
            // Retried only outside a response: inside one, the open transaction holds part of it, and a retry would
            // commit that part with the export called again. (A response is read from memory or a spool file, so
            // only a call fails with these codes.)
            if (!held && (e.code() == ErrorCode.CONNECTION_FAILED || e.code() == ErrorCode.PROCEDURE_TIMEOUT)) {
                throw new RetriableException("[" + object.name() + "] " + e.getMessage(), e);
            }
            throw new ConnectException(e.getMessage(), e);
        }
        List<SourceRecord> records = new ArrayList<>(step.changes().size() + 1);
        if (step.positionOnly().isPresent()) {
            records.add(slot.mapper.position(config.positionTopic(), step.positionOnly().getAsLong()));
        }
        for (ObjectCursor.Emitted emitted : step.changes()) {
            try {
                slot.mapper.add(emitted, records);
            } catch (TidemarkException e) {
                slot.cursor.close();
                throw new ConnectException(e.getMessage(), e);
            }
        }
        if (step.isIdle()) {
            slot.dueNanos = System.nanoTime() + config.pollInterval().toNanos();
        } else if (transactions != null) {
            if (step.endsTransaction()) {
                transactions.commitTransaction(records.get(records.size() - 1));
            } else {
                holding = slot;
            }
        }
        return records;
    }

    @Override
    public void stop() {
        stopping = true;
        calls.cancel();
        wakeUps.wakeAll();
        if (subscription != null) {
            try {
                subscription.close();
            } catch (Exception e) {
                LOG.warn("Stopping the change notifications failed: {}", e.toString());
            }
        }
        synchronized (work) {
            slots.forEach(s -> s.cursor.close());
        }
        if (provider != null) {
            provider.close();
        }
    }

    /** One object of the task: its cursor, its record mapping and when it is next due. */
    private static final class Slot {
        final ObjectCursor cursor;
        final RecordMapper mapper;
        long dueNanos = System.nanoTime();

        Slot(ObjectCursor cursor, RecordMapper mapper) {
            this.cursor = cursor;
            this.mapper = mapper;
        }
    }
}
