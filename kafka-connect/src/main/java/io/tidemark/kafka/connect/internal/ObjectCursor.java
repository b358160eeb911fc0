package io.tidemark.kafka.connect.internal;

import io.tidemark.sync.Change;
import io.tidemark.sync.ChangeBatch;
import io.tidemark.sync.Diagnostic;
import io.tidemark.sync.ErrorCode;
import io.tidemark.sync.InitialSync;
import io.tidemark.sync.TidemarkException;
import io.tidemark.sync.TrackedObject;
import io.tidemark.sync.internal.contract.ChangeReader;
import io.tidemark.sync.internal.contract.ResponseScanner;
import io.tidemark.sync.internal.contract.ResponseSummary;
import io.tidemark.sync.internal.engine.CallRules;
import io.tidemark.sync.internal.engine.IncrementalSeed;
import io.tidemark.sync.internal.engine.ProviderDiagnostics;
import io.tidemark.sync.spi.CallContext;
import io.tidemark.sync.spi.ChangeProvider;
import io.tidemark.sync.spi.ResponsePayload;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.util.ArrayList;
import java.util.List;
import java.util.OptionalLong;

/**
 * Where one object stands in a task, and the calls that move it on, under the engine's version rules, taken from
 * core rather than copied:
 * <ol>
 *   <li>no committed offset: an INCREMENTAL object records the server's (or the seeding procedure's) version and
 *       delivers nothing ({@link IncrementalSeed}); a FULL one asks with {@code "initial":true};</li>
 *   <li>afterwards each call asks for the changes after the position ({@link CallRules#request}): the version every
 *       change up to which is in Kafka (committed, or handed to Connect by this task);</li>
 *   <li>a response is checked whole by core's {@link ResponseScanner} before any of it is handed out, then read
 *       as a stream by core's {@link ChangeReader}, a batch at a time;</li>
 *   <li>a response that would move the position back is refused ({@code WATERMARK_REGRESSION},
 *       {@link CallRules#versionToStore});</li>
 *   <li>after each call the provider's checks run and are logged ({@link ProviderDiagnostics}).</li>
 * </ol>
 * One rule is the connector's own: a batch of a {@code Diff} whose rows carry ascending versions (core's
 * {@link ResponseSummary#resumableBetweenPages()}) always ends at a version boundary (the rows of one version are
 * never split), and each record's offset is the highest version complete up to it; any other response (a
 * {@code Full} re-export) is one unit: only its last record carries the new version. The engine instead cuts pages
 * at the page size and holds a destination's position below a version split between pages; the connector cannot,
 * because an exactly-once transaction ends with a batch and must end at a version boundary.
 *
 * Not thread-safe: a task's poll thread owns it.
 */
public final class ObjectCursor implements AutoCloseable {

    private static final Logger LOG = LoggerFactory.getLogger(ObjectCursor.class);

    private final TrackedObject object;
    private final ChangeProvider provider;
    private final CallContext calls;
    private final int pageSize;
    private OptionalLong position;
    private OpenResponse open;
    private List<Diagnostic> diagnostics = List.of();

    public ObjectCursor(TrackedObject object, ChangeProvider provider, CallContext calls, int pageSize,
                        OptionalLong committed) {
        this.object = object;
        this.provider = provider;
        this.calls = calls;
        this.pageSize = pageSize;
        this.position = committed;
    }

    public TrackedObject object() {
        return object;
    }

    /** The version every change up to which has been handed out; empty before the first position is known. */
    public OptionalLong position() {
        return position;
    }

    /** Whether a response is being handed out: the next {@link #next()} continues it without calling. */
    public boolean inResponse() {
        return open != null;
    }

    /**
     * The next step: a seed or an empty first export (a position to store without a change), a batch of changes,
     * or {@link Step#idle()} when the procedure had nothing after the position.
     */
    public Step next() {
        if (open != null) {
            return open.take();
        }
        Step step;
        try {
            step = seedOrCall();
        } finally {
            // After every call, failed ones included, as the engine does after every cycle.
            diagnostics = ProviderDiagnostics.run(provider, object, position, LOG);
        }
        return step != null ? step : open.take();
    }

    /**
     * What the provider's checks said after the last call (logged when above INFO): on SQL Server a position older
     * than Change Tracking keeps ({@code WATERMARK_AGED_OUT}), on PostgreSQL changes held back by an old transaction.
     */
    public List<Diagnostic> diagnostics() {
        return diagnostics;
    }

    /** Seeds an INCREMENTAL object without a position, else calls the procedure; null when a response was opened. */
    private Step seedOrCall() {
        if (position.isEmpty() && object.initialSync() == InitialSync.INCREMENTAL) {
            long seeded = seed();
            position = OptionalLong.of(seeded);
            LOG.info("[{}] seeded at version {}; changes after it will be delivered", object.name(), seeded);
            return Step.position(seeded);
        }
        return call();
    }

    /** Calls the procedure once; returns the step when the response has no rows, else opens it and returns null. */
    private Step call() {
        OptionalLong from = position;
        ResponsePayload payload = provider.invoke(object, CallRules.request(object, from), calls);
        try {
            ResponseSummary summary = ResponseScanner.scan(object.name(), payload);
            long next = CallRules.versionToStore(object.name(), from, summary, "position", regressionAdvice());
            if (summary.rowCount() == 0) {
                payload.close();
                position = OptionalLong.of(next);
                // The first export of a FULL object found nothing: its position must still be stored, or a restarted
                // task would export again from scratch. Later empty responses need no record: reading again from
                // the committed version returns nothing new.
                return from.isEmpty() ? Step.position(next) : Step.idle();
            }
            open = new OpenResponse(payload, summary, from);
            return null;
        } catch (RuntimeException e) {
            payload.close();
            throw e;
        }
    }

    private long seed() {
        IncrementalSeed.Seeded seeded = IncrementalSeed.seed(object, provider, calls);
        seeded.discardWarning().ifPresent(warning -> LOG.warn("[{}] procedure {} {}. Return no rows when mode is"
                + " \"seed\", or use initial.sync FULL if the history was wanted.", object.name(),
                object.procedure(), warning));
        return seeded.version();
    }

    /**
     * What to do about a response below the committed offset, in Connect's terms. Of the engine's two causes only
     * the restored database applies: Connect gives each source partition to one task, so no second writer moves
     * an offset behind a task's back.
     */
    private String regressionAdvice() {
        return "Nothing of it was handed to Connect, and the task fails. If the source database was restored from a"
                + " backup or failed over to a copy whose versions are behind the committed offset, the changes"
                + " made there since lie below it. Start the object again without a gap: for an initial.sync FULL"
                + " object, stop the connector and reset its offsets for '" + object.name() + "' (DELETE"
                + " /connectors/<name>/offsets) to export everything again (consumers see rows again); for an"
                + " INCREMENTAL object, set object." + object.name() + ".initial.sync=FULL first, then reset."
                + " Resetting an INCREMENTAL object as it is starts from the current version and skips every change"
                + " made since the restore.";
    }

    /** Closes the response being handed out, if any; the position stays where the last batch left it. */
    @Override
    public void close() {
        if (open != null) {
            open.close();
            open = null;
        }
    }

    /** A response being handed out batch by batch. */
    private final class OpenResponse {
        private final ResponsePayload payload;
        private final ResponseSummary summary;
        private final ChangeReader reader;
        private final OptionalLong from;
        private final boolean resumable;
        private final int pageCount;
        /** The first change of the next batch, read ahead to find where a version ends. */
        private Change carried;
        private long handedOut;
        private ChangeBatch page;

        OpenResponse(ResponsePayload payload, ResponseSummary summary, OptionalLong from) {
            this.payload = payload;
            this.summary = summary;
            this.from = from;
            this.reader = new ChangeReader(object.name(), payload);
            this.resumable = summary.resumableBetweenPages();
            this.pageCount = Math.toIntExact((summary.rowCount() + pageSize - 1) / pageSize);
        }

        Step take() {
            List<Change> changes = new ArrayList<>();
            if (carried != null) {
                changes.add(carried);
                carried = null;
            }
            if (changes.size() < pageSize) {
                changes.addAll(reader.nextPage(pageSize - changes.size()));
            }
            if (resumable) {
                extendToVersionBoundary(changes);
            }
            boolean finished = handedOut + changes.size() >= summary.rowCount();
            if (changes.isEmpty() || finished && handedOut + changes.size() != summary.rowCount()) {
                throw new TidemarkException(ErrorCode.INTERNAL, object.name(), "[" + object.name() + "] the"
                        + " response held " + (handedOut + changes.size()) + " changes where the check counted "
                        + summary.rowCount() + "; nothing more is handed out", null);
            }
            List<Emitted> emitted = new ArrayList<>(changes.size());
            OptionalLong complete = position;
            for (int i = 0; i < changes.size(); i++) {
                Change change = changes.get(i);
                long index = handedOut + i;
                if (resumable) {
                    long version = change.version().orElseThrow();
                    boolean lastOfVersion = i == changes.size() - 1
                            || changes.get(i + 1).version().orElseThrow() > version;
                    if (lastOfVersion) {
                        complete = OptionalLong.of(version);
                    }
                } else if (finished && i == changes.size() - 1) {
                    complete = OptionalLong.of(summary.versionToStore());
                }
                emitted.add(new Emitted(change, complete, envelopePage(index)));
            }
            handedOut += changes.size();
            position = complete;
            if (finished) {
                position = OptionalLong.of(summary.versionToStore());
                close();
                open = null;
            }
            return Step.changes(emitted, resumable || finished);
        }

        /** Reads on while the next change has the batch's last version, keeping the first that does not. */
        private void extendToVersionBoundary(List<Change> changes) {
            if (changes.isEmpty()) {
                return;
            }
            long last = changes.get(changes.size() - 1).version().orElseThrow();
            while (handedOut + changes.size() < summary.rowCount()) {
                List<Change> one = reader.nextPage(1);
                if (one.isEmpty()) {
                    return;
                }
                Change next = one.get(0);
                if (next.version().orElseThrow() == last) {
                    changes.add(next);
                } else {
                    carried = next;
                    return;
                }
            }
        }

        /** The engine's page of the change at {@code index}, for the envelope headers (same page size, same keys). */
        private ChangeBatch envelopePage(long index) {
            int number = Math.toIntExact(index / pageSize) + 1;
            if (page == null || page.pageNumber() != number) {
                page = new ChangeBatch(object.name(), from.orElse(0L), summary.versionToStore(), summary.syncType(),
                        summary.reasonCode(), List.of(), number, pageCount, summary.rowCount());
            }
            return page;
        }

        void close() {
            try {
                reader.close();
            } finally {
                payload.close();
            }
        }
    }

    /** One change handed out, the offset version its record carries, and the engine page it belongs to. */
    public record Emitted(Change change, OptionalLong offsetVersion, ChangeBatch page) {
    }

    /**
     * What one {@link #next()} produced.
     *
     * @param changes          the changes, in the procedure's order (empty for a position or idle step)
     * @param positionOnly     a version to store without a change (a seed, or a first export with no rows)
     * @param endsTransaction  the step ends at a version boundary: an exactly-once transaction may end here
     */
    public record Step(List<Emitted> changes, OptionalLong positionOnly, boolean endsTransaction) {

        static Step idle() {
            return new Step(List.of(), OptionalLong.empty(), false);
        }

        static Step position(long version) {
            return new Step(List.of(), OptionalLong.of(version), true);
        }

        static Step changes(List<Emitted> changes, boolean endsTransaction) {
            return new Step(List.copyOf(changes), OptionalLong.empty(), endsTransaction);
        }

        public boolean isIdle() {
            return changes.isEmpty() && positionOnly.isEmpty();
        }
    }
}
