package io.tidemark.sync.internal.engine;

import io.tidemark.sync.ErrorCode;
import io.tidemark.sync.ObjectReport;
import io.tidemark.sync.TidemarkException;
import io.tidemark.sync.Outcome;
import io.tidemark.sync.TrackedObject;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.Executors;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.ScheduledThreadPoolExecutor;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The retry wait of a failing object: change notifications (one per commit with LISTEN) must not turn it into a
 * retry per commit; an explicit wake still retries at once, and a success ends the wait.
 */
class PollerTest {

    private static final TrackedObject ITEMS = TrackedObject.of("Items", "items_changes");

    private final ScheduledExecutorService scheduler = Executors.newSingleThreadScheduledExecutor();
    private final BlockingQueue<Long> cycleStarts = new LinkedBlockingQueue<>();
    private final AtomicReference<Outcome> outcome = new AtomicReference<>(Outcome.BLOCKED);
    private final AtomicReference<ErrorCode> failure = new AtomicReference<>(ErrorCode.DESTINATION_FAILED);

    @AfterEach
    void shutdown() {
        scheduler.shutdownNow();
    }

    private Poller poller(Duration interval) {
        return new Poller(ITEMS, interval, scheduler, object -> {
            cycleStarts.add(System.nanoTime());
            ObjectReport.Builder report = ObjectReport.builder(object.name(), Instant.EPOCH).outcome(outcome.get());
            if (outcome.get() == Outcome.FAILED || outcome.get() == Outcome.BLOCKED) {
                report.error(TidemarkException.forObject(failure.get(), object.name(), "scripted failure"));
            }
            return report.build();
        }, new FailureLog(ITEMS.name(), Clock.systemUTC()));
    }

    @Test
    void the_retry_wait_doubles_from_the_interval_up_to_five_minutes_or_the_interval_if_longer() {
        Duration second = Duration.ofSeconds(1);
        assertThat(Poller.retryDelay(second, 1)).isEqualTo(second);
        assertThat(Poller.retryDelay(second, 2)).isEqualTo(Duration.ofSeconds(2));
        assertThat(Poller.retryDelay(second, 3)).isEqualTo(Duration.ofSeconds(4));
        assertThat(Poller.retryDelay(second, 9)).isEqualTo(Duration.ofSeconds(256));
        assertThat(Poller.retryDelay(second, 10)).isEqualTo(Poller.MAX_RETRY_DELAY);
        assertThat(Poller.retryDelay(second, Integer.MAX_VALUE)).isEqualTo(Poller.MAX_RETRY_DELAY);
        Duration tenMinutes = Duration.ofMinutes(10);
        assertThat(Poller.retryDelay(tenMinutes, 1)).isEqualTo(tenMinutes);
        assertThat(Poller.retryDelay(tenMinutes, 5)).isEqualTo(tenMinutes);
    }

    @Test
    void notifications_do_not_hurry_a_failing_object_but_a_wake_does_and_success_ends_the_wait() throws Exception {
        Poller poller = poller(Duration.ofHours(1));
        poller.start();
        assertThat(cycleStarts.poll(10, TimeUnit.SECONDS)).as("the first cycle").isNotNull();

        for (int i = 0; i < 10_000; i++) {
            poller.changesNotified();
        }
        assertThat(cycleStarts.poll(300, TimeUnit.MILLISECONDS)).as("a retry caused by notifications").isNull();

        outcome.set(Outcome.DELIVERED);
        poller.wake();
        assertThat(cycleStarts.poll(10, TimeUnit.SECONDS)).as("the retry an explicit wake asks for").isNotNull();

        poller.changesNotified();
        assertThat(cycleStarts.poll(10, TimeUnit.SECONDS))
                .as("after a success a notification polls at once again").isNotNull();
        poller.stop();
    }

    @Test
    void an_object_that_could_not_reach_the_database_retries_once_each_time_the_database_is_seen_answering()
            throws Exception {
        outcome.set(Outcome.FAILED);
        failure.set(ErrorCode.CONNECTION_FAILED);
        Poller poller = poller(Duration.ofHours(1));
        poller.start();
        assertThat(cycleStarts.poll(10, TimeUnit.SECONDS)).as("the first cycle, failed").isNotNull();
        awaitIdle(poller);
        assertThat(poller.waitingForDatabase()).isTrue();

        poller.databaseReachable();
        assertThat(cycleStarts.poll(10, TimeUnit.SECONDS)).as("the retry when the database answers").isNotNull();
        awaitIdle(poller);
        poller.databaseReachable();
        poller.changesNotified();
        assertThat(cycleStarts.poll(300, TimeUnit.MILLISECONDS))
                .as("a second retry while the database answers but the object still cannot reach it").isNull();

        poller.databaseUnreachable();
        poller.changesNotified(); // a notification, or the listener's reconnect: the database answers again
        assertThat(cycleStarts.poll(10, TimeUnit.SECONDS)).as("the retry after it was away and back").isNotNull();

        outcome.set(Outcome.NO_CHANGES);
        poller.wake();
        assertThat(cycleStarts.poll(10, TimeUnit.SECONDS)).isNotNull();
        awaitIdle(poller);
        assertThat(poller.waitingForDatabase()).as("after a success").isFalse();
        poller.stop();
    }

    @Test
    void other_failures_keep_their_backoff_when_the_database_answers() throws Exception {
        outcome.set(Outcome.FAILED);
        failure.set(ErrorCode.PROCEDURE_FAILED);
        Poller poller = poller(Duration.ofHours(1));
        poller.start();
        assertThat(cycleStarts.poll(10, TimeUnit.SECONDS)).as("the first cycle, failed").isNotNull();
        awaitIdle(poller);

        assertThat(poller.waitingForDatabase()).isFalse();
        poller.databaseUnreachable();
        poller.databaseReachable();
        poller.changesNotified();
        assertThat(cycleStarts.poll(300, TimeUnit.MILLISECONDS)).as("a retry of a broken procedure").isNull();
        poller.stop();
    }

    /** Waits until the cycle that just started has been accounted for (its failure recorded, the next scheduled). */
    private static void awaitIdle(Poller poller) throws InterruptedException {
        Thread.sleep(100);
    }

    @Test
    void a_success_elsewhere_ends_the_retry_wait() throws Exception {
        Poller poller = poller(Duration.ofHours(1));
        poller.start();
        assertThat(cycleStarts.poll(10, TimeUnit.SECONDS)).as("the first cycle, blocked").isNotNull();
        poller.changesNotified();
        assertThat(cycleStarts.poll(200, TimeUnit.MILLISECONDS)).as("a retry caused by a notification").isNull();

        poller.succeededElsewhere();
        poller.changesNotified();
        assertThat(cycleStarts.poll(10, TimeUnit.SECONDS)).as("a poll after the success elsewhere").isNotNull();
        poller.stop();
    }

    @Test
    void a_run_that_began_before_a_wake_replaced_it_does_not_cycle_and_the_replacement_does() {
        ManualScheduler manual = new ManualScheduler();
        try {
            Poller poller = new Poller(ITEMS, Duration.ofHours(1), manual, object -> {
                cycleStarts.add(System.nanoTime());
                return ObjectReport.builder(object.name(), Instant.EPOCH).outcome(Outcome.NO_CHANGES).build();
            }, new FailureLog(ITEMS.name(), Clock.systemUTC()));
            poller.start();
            // The wake cancels the first run; cancel(false) reports success even for a run whose thread has
            // begun but not yet reached the poller, so that run may still arrive: it must not cycle.
            poller.wake();
            assertThat(manual.commands).hasSize(2);

            manual.commands.get(0).run();
            assertThat(cycleStarts).as("cycles run by the replaced run").isEmpty();
            manual.commands.get(1).run();
            assertThat(cycleStarts).as("cycles run by its replacement").hasSize(1);
            poller.stop();
        } finally {
            manual.shutdownNow();
        }
    }

    @Test
    void notifications_arriving_during_a_cycle_make_one_more_cycle_not_one_each() {
        // While changes flow, a commit is notified every few milliseconds and a cycle takes about as long: a cycle
        // per notification would multiply the engine's queries. Those that arrive while a cycle runs share one.
        ManualScheduler manual = new ManualScheduler();
        Duration interval = Duration.ofHours(1);
        try {
            AtomicReference<Poller> self = new AtomicReference<>();
            Poller poller = new Poller(ITEMS, interval, manual, object -> {
                cycleStarts.add(System.nanoTime());
                if (cycleStarts.size() == 1) {
                    for (int commit = 0; commit < 100; commit++) {
                        self.get().changesNotified();
                    }
                }
                return ObjectReport.builder(object.name(), Instant.EPOCH).outcome(Outcome.DELIVERED).build();
            }, new FailureLog(ITEMS.name(), Clock.systemUTC()));
            self.set(poller);
            poller.start();

            manual.commands.get(0).run();
            assertThat(manual.delaysNanos).as("the start, then one cycle at once for the 100 notifications")
                    .containsExactly(0L, 0L);
            manual.commands.get(1).run();
            assertThat(cycleStarts).as("cycles run").hasSize(2);
            assertThat(manual.delaysNanos).as("after a cycle nobody notified: the interval")
                    .containsExactly(0L, 0L, interval.toNanos());
            poller.stop();
        } finally {
            manual.shutdownNow();
        }
    }

    /** Hands every scheduled command to the test instead of running it; the futures it returns only cancel. */
    private static final class ManualScheduler extends ScheduledThreadPoolExecutor {
        final List<Runnable> commands = new ArrayList<>();
        final List<Long> delaysNanos = new ArrayList<>();

        ManualScheduler() {
            super(1);
        }

        @Override
        public ScheduledFuture<?> schedule(Runnable command, long delay, TimeUnit unit) {
            commands.add(command);
            delaysNanos.add(unit.toNanos(delay));
            return super.schedule(() -> { }, 1, TimeUnit.DAYS);
        }
    }

    @Test
    @Timeout(60)
    void attempts_of_a_failing_object_spread_out_however_many_notifications_arrive() throws Exception {
        Duration interval = Duration.ofMillis(40);
        Poller poller = poller(interval);
        poller.start();
        List<Long> starts = new ArrayList<>();
        // Notify continuously, as a busy table with LISTEN would, until five attempts were made.
        while (starts.size() < 5) {
            poller.changesNotified();
            Long start = cycleStarts.poll();
            if (start != null) {
                starts.add(start);
            }
            Thread.onSpinWait();
        }
        poller.stop();

        for (int attempt = 1; attempt < starts.size(); attempt++) {
            long gapMillis = TimeUnit.NANOSECONDS.toMillis(starts.get(attempt) - starts.get(attempt - 1));
            long expected = Poller.retryDelay(interval, attempt).toMillis();
            assertThat(gapMillis).as("wait before attempt %d", attempt + 1).isGreaterThanOrEqualTo(expected - 1);
        }
    }
}
