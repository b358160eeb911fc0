package io.tidemark.postgres.internal.wake;

import io.tidemark.sync.TrackedObject;
import org.junit.jupiter.api.Test;

import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.ScheduledThreadPoolExecutor;
import java.util.concurrent.TimeUnit;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The timed reads of {@link ArmedWakeUps} while changes flow: no connection is needed, as no read here arms. The
 * timer only collects what is scheduled, and the test runs it when it chooses: the order of reads and timers is the
 * test's, not the machine's (a 1 ms timer can fire before the next line of a test on a busy machine).
 */
class ArmedWakeUpsTest {

    private static final TrackedObject ITEMS = TrackedObject.of("Items", "public.items_changes");
    private static final String ARM = "public.items_outbox_arm";

    /** Keeps what is scheduled until {@link #runScheduled()}. */
    private static final class HeldTimer extends ScheduledThreadPoolExecutor {
        private final List<Runnable> scheduled = new ArrayList<>();

        HeldTimer() {
            super(1);
        }

        @Override
        public synchronized ScheduledFuture<?> schedule(Runnable command, long delay, TimeUnit unit) {
            scheduled.add(command);
            return null;
        }

        synchronized int runScheduled() {
            List<Runnable> due = new ArrayList<>(scheduled);
            scheduled.clear();
            due.forEach(Runnable::run);
            return due.size();
        }
    }

    private static Optional<ArmHint.Read> delivered(long horizon) {
        return Optional.of(new ArmHint.Read(ARM, horizon, horizon - 1, true));
    }

    @Test
    void a_timed_read_is_dropped_when_another_read_came_after_the_one_that_scheduled_it() {
        List<String> wakeUps = new ArrayList<>();
        HeldTimer timer = new HeldTimer();
        try (ArmedWakeUps wake = new ArmedWakeUps(List.of(ITEMS), wakeUps::add, 5, timer)) {
            // A read that delivered schedules the next one; a notified read right behind it (the flag was set
            // before the flow began) schedules its own. Only the later one's timer may read again.
            wake.afterRead(null, ITEMS, 10, delivered(20));
            wake.afterRead(null, ITEMS, 20, delivered(30));
            assertThat(timer.runScheduled()).as("both reads scheduled a timed read").isEqualTo(2);
            assertThat(wakeUps).as("one timed read, the later read's").containsExactly("Items");

            // With no read in between, the timed read happens.
            wake.afterRead(null, ITEMS, 30, delivered(40));
            assertThat(timer.runScheduled()).isEqualTo(1);
            assertThat(wakeUps).containsExactly("Items", "Items");
        }
    }

    @Test
    void a_page_cut_short_counts_as_a_read_that_comes_after() {
        List<String> wakeUps = new ArrayList<>();
        HeldTimer timer = new HeldTimer();
        try (ArmedWakeUps wake = new ArmedWakeUps(List.of(ITEMS), wakeUps::add, 5, timer)) {
            wake.afterRead(null, ITEMS, 10, delivered(20));
            // The engine reads the next page at once after a page cut short by maxRows: that read decides.
            wake.afterRead(null, ITEMS, 19, Optional.of(new ArmHint.Read(ARM, 40, 25, true)));
            assertThat(timer.runScheduled()).as("the first read scheduled a timed read").isEqualTo(1);
            assertThat(wakeUps).as("the timed read of the first read is dropped").isEmpty();
        }
    }
}
