package io.tidemark.sqlserver;

import io.tidemark.sync.ErrorCode;
import io.tidemark.sync.JdbcWatermarkStore;
import io.tidemark.sync.TidemarkException;
import io.tidemark.sync.internal.coordination.Fences;
import io.tidemark.sync.internal.coordination.HeldLease;
import io.tidemark.sync.internal.store.JdbcLeaseStore;
import io.tidemark.testing.SqlServerContainerTest;
import io.tidemark.testing.SqlServerDatabase;
import org.junit.jupiter.api.Test;

import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.Map;
import java.util.OptionalLong;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.catchThrowableOfType;

/**
 * The lease tables and the fence on SQL Server (their SQL is checked without a server in core's
 * {@code LeaseDialectTest}): a lease is taken once, renewed only by its holder at its epoch, taken over only after
 * it expired on the server's clock (with a higher epoch), and a former holder's write is refused. Skipped where
 * there is no Docker.
 */
@SqlServerContainerTest
class SqlServerLeaseContainerTest {

    private static final Duration LONG = Duration.ofMinutes(5);
    private static final String SOURCE = "sqlserver:[dbo].[GetItemChanges]";

    private final SqlServerDatabase database;

    SqlServerLeaseContainerTest(SqlServerDatabase database) {
        this.database = database;
    }

    @Test
    void a_lease_is_held_by_one_instance_and_taken_over_only_after_it_expired() {
        JdbcWatermarkStore store = JdbcWatermarkStore.builder(database.dataSource()).schema("leases").build();
        JdbcLeaseStore leases = new JdbcLeaseStore(store.support());

        OptionalLong a = leases.<OptionalLong>inSession("t", s -> s.acquire("Items", "a", LONG));
        assertThat(a).hasValue(1);
        assertThat(leases.<OptionalLong>inSession("t", s -> s.acquire("Items", "b", LONG))).as("held by a").isEmpty();
        assertThat(leases.<Boolean>inSession("t", s -> s.renew("Items", "a", 1, LONG))).isTrue();
        assertThat(leases.<Boolean>inSession("t", s -> s.renew("Items", "b", 1, LONG))).as("not b's").isFalse();
        assertThat(leases.<Map<String, String>>inSession("t", s -> s.holders())).containsEntry("Items", "a");

        database.execute("UPDATE [leases].[sync_state_leases] SET expires_at = DATEADD(second, -1, SYSUTCDATETIME())");
        assertThat(leases.<Map<String, String>>inSession("t", s -> s.holders())).doesNotContainKey("Items");
        assertThat(leases.<OptionalLong>inSession("t", s -> s.acquire("Items", "b", LONG))).hasValue(2);
        assertThat(leases.<Boolean>inSession("t", s -> s.renew("Items", "a", 1, LONG))).as("a lost it").isFalse();

        HeldLease former = new HeldLease("Items", "a", 1, Clock.systemUTC(), Instant.now().plus(Duration.ofHours(1)));
        HeldLease current = new HeldLease("Items", "b", 2, Clock.systemUTC(), Instant.now().plus(Duration.ofHours(1)));
        TidemarkException refused = catchThrowableOfType(TidemarkException.class, () -> Fences.under(former, () -> {
            store.advance("Items", SOURCE, OptionalLong.empty(), 5, List.of(), Instant.now());
            return null;
        }));
        assertThat(refused.code()).isEqualTo(ErrorCode.LEASE_LOST);
        assertThat(store.load("Items")).isEmpty();
        Fences.under(current, () -> {
            store.advance("Items", SOURCE, OptionalLong.empty(), 5, List.of(), Instant.now());
            return null;
        });
        assertThat(store.load("Items").orElseThrow().version()).hasValue(5);

        assertThat(leases.<Boolean>inSession("t", s -> s.release("Items", "b", 2))).isTrue();
        assertThat(leases.<OptionalLong>inSession("t", s -> s.acquire("Items", "a", LONG))).as("free at once").hasValue(3);
    }

    @Test
    void heartbeats_count_the_live_instances_and_a_clean_leave_counts_at_once() {
        JdbcWatermarkStore store = JdbcWatermarkStore.builder(database.dataSource()).schema("beats").build();
        JdbcLeaseStore leases = new JdbcLeaseStore(store.support());
        assertThat(leases.<Integer>inSession("t", s -> s.heartbeat("set", "a", "[\"d1\"]", LONG))).isEqualTo(1);
        assertThat(leases.<Integer>inSession("t", s -> s.heartbeat("set", "b", "[\"d1\",\"d2\"]", LONG))).isEqualTo(2);
        assertThat(leases.<Integer>inSession("t", s -> s.heartbeat("set", "b", "[\"d1\",\"d2\"]", LONG))).isEqualTo(2);
        assertThat(leases.<List<String>>inSession("t", s -> s.liveDestinations()))
                .as("each live instance's destination list").containsExactlyInAnyOrder("[\"d1\"]", "[\"d1\",\"d2\"]");
        leases.inSession("t", s -> {
            s.leave("b");
            return null;
        });
        assertThat(leases.<Integer>inSession("t", s -> s.heartbeat("set", "a", "[\"d1\"]", LONG))).isEqualTo(1);
    }
}
