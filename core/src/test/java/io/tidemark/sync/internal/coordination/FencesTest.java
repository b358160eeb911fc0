package io.tidemark.sync.internal.coordination;

import io.tidemark.sync.ErrorCode;
import io.tidemark.sync.TidemarkException;
import org.junit.jupiter.api.Test;

import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.time.ZoneId;
import java.time.ZoneOffset;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/** The local side of a lease: its deadline on the injected clock, and the check before each page. */
class FencesTest {

    private static final Instant T0 = Instant.parse("2026-01-01T00:00:00Z");

    /** A clock the test moves. */
    private static final class MovingClock extends Clock {
        private Instant now = T0;

        @Override
        public ZoneId getZone() {
            return ZoneOffset.UTC;
        }

        @Override
        public Clock withZone(ZoneId zone) {
            return this;
        }

        @Override
        public Instant instant() {
            return now;
        }
    }

    @Test
    void a_lease_is_trusted_until_its_local_deadline_and_not_after() {
        MovingClock clock = new MovingClock();
        HeldLease lease = new HeldLease("Items", "a", 3, clock, T0.plusSeconds(12));
        Fences.under(lease, () -> {
            Fences.checkStillHeld("Items");
            clock.now = T0.plusSeconds(11);
            Fences.checkStillHeld("Items");
            clock.now = T0.plusSeconds(12);
            assertThatThrownBy(() -> Fences.checkStillHeld("Items"))
                    .isInstanceOfSatisfying(TidemarkException.class, e -> {
                        assertThat(e.code()).isEqualTo(ErrorCode.LEASE_LOST);
                        assertThat(e.objectName()).contains("Items");
                    })
                    .hasMessageContaining("instance 'a' no longer holds the object at epoch 3")
                    .hasMessageContaining("may have expired");
            lease.renewed(T0.plusSeconds(24));
            Fences.checkStillHeld("Items");
            return null;
        });
    }

    @Test
    void a_lost_lease_fails_at_once_and_the_binding_ends_with_the_work() {
        HeldLease lease = new HeldLease("Items", "a", 1, Clock.systemUTC(), Instant.now().plus(Duration.ofHours(1)));
        lease.markLost();
        Fences.under(lease, () -> {
            assertThat(Fences.current("Items")).containsSame(lease);
            assertThat(Fences.current("Other")).as("bound to its object only").isEmpty();
            assertThatThrownBy(() -> Fences.checkStillHeld("Items")).hasMessageContaining("was lost");
            Fences.checkStillHeld("Other");
            return null;
        });
        assertThat(Fences.current("Items")).isEmpty();
        Fences.checkStillHeld("Items"); // no lease bound: a single-instance engine is never stopped here
    }

    @Test
    void the_monotonic_clock_moves_forward_with_elapsed_time() throws InterruptedException {
        MonotonicClock clock = new MonotonicClock();
        Instant first = clock.instant();
        Thread.sleep(5);
        assertThat(clock.instant()).isAfter(first);
        assertThat(Duration.between(first, clock.instant())).isLessThan(Duration.ofSeconds(5));
    }
}
