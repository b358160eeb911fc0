package io.tidemark.postgres.internal.logical;

import io.tidemark.postgres.internal.logical.PgOutput.Tuple;
import io.tidemark.sync.internal.sql.PgName;
import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;

class HeldTransactionTest {

    private static final PgName A = PgName.of("public", "a");
    private static final PgName B = PgName.of("public", "b");

    /** A change whose row holds one value of {@code bytes} bytes. */
    private static HeldTransaction.Decoded change(int bytes) {
        Tuple row = new Tuple(new byte[] {PgOutput.TEXT}, new byte[][] {new byte[bytes]});
        return new HeldTransaction.Decoded('I', null, null, row, null, false, false);
    }

    private static void add(HeldTransaction t, PgName table, int changes) {
        for (int i = 0; i < changes; i++) {
            t.add(table, change(10));
        }
    }

    @Test
    void the_change_one_past_the_limit_lets_go_of_its_table_and_the_tables_written_before_keep_theirs() {
        HeldTransaction t = new HeldTransaction(1_000, Long.MAX_VALUE);
        add(t, A, 600);
        add(t, B, 400);
        assertThat(t.size()).as("the limit itself is held").isEqualTo(1_000);
        assertThat(t.letGo()).isEmpty();

        t.add(B, change(10));
        assertThat(t.letGo()).containsExactly(B);
        assertThat(t.changes()).containsOnlyKeys(A);
        assertThat(t.changes().get(A)).hasSize(600);
        assertThat(t.size()).isEqualTo(600);

        add(t, B, 5_000);
        assertThat(t.size()).as("a table let go holds nothing more").isEqualTo(600);
        add(t, A, 400);
        assertThat(t.letGo()).containsExactly(B);
        t.add(A, change(10));
        assertThat(t.letGo()).containsExactly(B, A);
        assertThat(t.size()).isZero();
        assertThat(t.bytes()).isZero();
    }

    @Test
    void wide_rows_are_bounded_by_their_bytes() {
        HeldTransaction t = new HeldTransaction(1_000, 1L << 20);
        add(t, A, 10);
        for (int i = 0; i < 3; i++) {
            t.add(B, change(300_000));
        }
        assertThat(t.letGo()).isEmpty();
        assertThat(t.bytes()).isBetween(900_000L, 1L << 20);
        t.add(B, change(300_000));
        assertThat(t.letGo()).containsExactly(B);
        assertThat(t.changes()).containsOnlyKeys(A);
        assertThat(t.bytes()).as("what A holds, values and their overhead").isBetween(100L, 2_000L);
    }

    @Test
    void a_truncate_forgets_what_the_table_held_before_it_and_counts_it_no_more() {
        HeldTransaction t = new HeldTransaction(1_000, Long.MAX_VALUE);
        add(t, A, 900);
        t.truncate(A);
        assertThat(t.size()).isZero();
        assertThat(t.truncated()).containsExactly(A);
        add(t, A, 1_000);
        assertThat(t.letGo()).as("the 900 before the truncate count no more").isEmpty();
        assertThat(t.changes().get(A)).hasSize(1_000);

        t.clear();
        assertThat(t.size()).isZero();
        assertThat(t.truncated()).isEmpty();
        assertThat(t.changes()).isEmpty();
    }

    @Test
    void each_transaction_starts_from_nothing_held_and_nothing_let_go() {
        HeldTransaction t = new HeldTransaction(1_000, 1L << 20);
        for (int i = 0; i < 3; i++) {
            t.add(A, change(300_000));
        }
        add(t, B, 1_001); // B let go by the count
        assertThat(t.letGo()).containsExactly(B);
        t.clear();
        assertThat(t.bytes()).isZero();
        assertThat(t.letGo()).isEmpty();
        for (int i = 0; i < 3; i++) {
            t.add(A, change(300_000)); // as much again: under the limit in a transaction of its own
        }
        add(t, B, 990);
        assertThat(t.letGo()).as("nothing of the last transaction counts").isEmpty();
        assertThat(t.take(A)).hasSize(3);
        assertThat(t.tables()).containsExactly(B);
        assertThat(t.size()).isEqualTo(990);
    }
}
