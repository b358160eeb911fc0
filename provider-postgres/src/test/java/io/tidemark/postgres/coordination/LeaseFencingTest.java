package io.tidemark.postgres.coordination;

import io.tidemark.sync.Change;
import io.tidemark.sync.ChangeBatch;
import io.tidemark.sync.ErrorCode;
import io.tidemark.sync.JdbcDeadLetterStore;
import io.tidemark.sync.JdbcWatermarkStore;
import io.tidemark.sync.Operation;
import io.tidemark.sync.SyncType;
import io.tidemark.sync.TidemarkException;
import io.tidemark.sync.internal.coordination.Fences;
import io.tidemark.sync.internal.coordination.HeldLease;
import io.tidemark.sync.internal.store.JdbcLeaseStore;
import io.tidemark.sync.spi.DeadLetter;
import io.tidemark.sync.spi.PositionAdvance;
import io.tidemark.sync.spi.WatermarkState;
import io.tidemark.testing.EmbeddedPostgresTest;
import io.tidemark.testing.TestDatabase;
import org.junit.jupiter.api.Test;

import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.OptionalLong;
import java.util.concurrent.atomic.AtomicInteger;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.catchThrowableOfType;

/**
 * The fence of each store write path against a real PostgreSQL: a write made under a lease succeeds only for the
 * holder at its epoch while the lease has not expired on the database's clock; a former holder's write fails with
 * LEASE_LOST and changes nothing. The leases here carry a local deadline an hour away, as a holder whose own clock
 * did not notice its pause would: the database alone refuses.
 */
@EmbeddedPostgresTest
class LeaseFencingTest {

    private static final AtomicInteger OBJECTS = new AtomicInteger();
    private static final String SOURCE = "test:fencing";
    private static final Duration LONG = Duration.ofMinutes(5);

    private final TestDatabase database;
    private final JdbcWatermarkStore store;
    private final JdbcDeadLetterStore letters;
    private final JdbcLeaseStore leases;
    private final String object = "fenced_" + OBJECTS.incrementAndGet();

    LeaseFencingTest(TestDatabase database) {
        this.database = database;
        this.store = JdbcWatermarkStore.create(database.dataSource());
        this.letters = JdbcDeadLetterStore.create(database.dataSource());
        this.leases = new JdbcLeaseStore(store.support());
    }

    private HeldLease take(String holder) {
        long epoch = leases.inSession("take", s -> s.acquire(object, holder, LONG)).orElseThrow();
        return new HeldLease(object, holder, epoch, Clock.systemUTC(), Instant.now().plus(Duration.ofHours(1)));
    }

    /** The lease runs out on the database's clock, as it does when its holder stops renewing it. */
    private void expire() {
        database.execute("UPDATE tidemark.sync_state_leases SET expires_at = clock_timestamp() - interval '1 second'"
                + " WHERE object_name = '" + object + "'");
    }

    private void advance(long from, long to) {
        store.advance(object, SOURCE, from < 0 ? OptionalLong.empty() : OptionalLong.of(from), to,
                List.of(new PositionAdvance("d", from < 0 ? OptionalLong.empty() : OptionalLong.of(from), to)),
                Instant.now());
    }

    private static TidemarkException leaseLost(Runnable write) {
        TidemarkException e = catchThrowableOfType(TidemarkException.class, write::run);
        assertThat(e).as("the write must be refused").isNotNull();
        assertThat(e.code()).isEqualTo(ErrorCode.LEASE_LOST);
        return e;
    }

    private OptionalLong version() {
        return store.load(object).map(WatermarkState::version).orElse(OptionalLong.empty());
    }

    private OptionalLong position() {
        return store.load(object).map(s -> s.positions().get("d").position()).orElse(OptionalLong.empty());
    }

    private <T> T under(HeldLease lease, Runnable write) {
        return Fences.under(lease, () -> {
            write.run();
            return null;
        });
    }

    @Test
    void the_holder_at_its_epoch_moves_the_watermark_and_the_position() {
        HeldLease a = take("a");
        under(a, () -> advance(-1, 5));
        under(a, () -> advance(5, 7));
        assertThat(version()).hasValue(7);
        assertThat(position()).hasValue(7);
        assertThat(a.valid()).isTrue();
    }

    @Test
    void a_former_holder_cannot_move_the_watermark_or_a_position_after_a_takeover() {
        HeldLease a = take("a");
        under(a, () -> advance(-1, 5));
        expire();
        HeldLease b = take("b");
        assertThat(b.epoch()).isEqualTo(a.epoch() + 1);

        TidemarkException e = leaseLost(() -> under(a, () -> advance(5, 9)));
        assertThat(e.getMessage()).contains("'a' no longer holds the object at epoch " + a.epoch());
        assertThat(version()).hasValue(5);
        assertThat(position()).hasValue(5);
        assertThat(a.valid()).as("the refusal marks the lease lost").isFalse();

        under(b, () -> advance(5, 9));
        assertThat(version()).hasValue(9);
    }

    @Test
    void an_expired_lease_fences_even_when_no_one_took_it_over() {
        HeldLease a = take("a");
        expire();
        leaseLost(() -> under(a, () -> advance(-1, 5)));
        assertThat(version()).isEmpty();
    }

    @Test
    void a_former_holder_cannot_record_an_error_on_the_row() {
        HeldLease a = take("a");
        under(a, () -> store.recordPoll(object, Instant.now(), "first"));
        expire();
        take("b");
        leaseLost(() -> under(a, () -> store.recordPoll(object, Instant.now(), "from the former holder")));
        assertThat(store.load(object).orElseThrow().lastError()).hasValue("first");
    }

    @Test
    void a_former_holder_cannot_record_or_resolve_a_dead_letter() {
        HeldLease a = take("a");
        DeadLetter stored = Fences.under(a, () -> letters.record(letter(1)));
        expire();
        take("b");

        leaseLost(() -> under(a, () -> letters.record(letter(2))));
        leaseLost(() -> under(a, () -> letters.resolve(object, "d", stored.idempotencyKey())));
        assertThat(letters.list(object)).extracting(DeadLetter::id).containsExactly(stored.id());
    }

    @Test
    void a_write_outside_a_cycle_is_not_fenced_and_other_objects_are_not_affected() {
        HeldLease a = take("a");
        expire();
        take("b");
        // An operator's pause, or a write of a single-instance engine, runs under no lease.
        store.setPaused(object, true, Instant.now());
        assertThat(store.load(object).orElseThrow().paused()).isTrue();
        // A lease binds one object only: another object's write from the same thread is not fenced by it.
        String other = object + "_other";
        Fences.under(a, () -> {
            store.advance(other, SOURCE, OptionalLong.empty(), 3, List.of(), Instant.now());
            return null;
        });
        assertThat(store.load(other).orElseThrow().version()).hasValue(3);
    }

    private DeadLetter letter(long version) {
        ChangeBatch batch = new ChangeBatch(object, version - 1, version, SyncType.DIFF, 0,
                List.of(Change.fromRaw(Operation.INSERT, version, List.of(), ("{\"Id\":" + version + "}").getBytes(java.nio.charset.StandardCharsets.UTF_8))), 1, 1, 1);
        return DeadLetter.of(batch, "d", new IllegalStateException("refused"), Instant.now());
    }
}
