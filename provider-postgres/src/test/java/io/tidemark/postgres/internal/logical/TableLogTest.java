package io.tidemark.postgres.internal.logical;

import io.tidemark.postgres.PostgresLogicalCapture;
import org.junit.jupiter.api.Test;

import java.nio.charset.StandardCharsets;
import java.util.List;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

class TableLogTest {

    private static byte[] e(String text) {
        return text.getBytes(StandardCharsets.UTF_8);
    }

    private static List<String> texts(TableLog.Page page) {
        return page.elements().stream().map(b -> new String(b, StandardCharsets.UTF_8)).toList();
    }

    @Test
    void a_page_holds_the_changes_after_the_position_and_never_splits_a_transaction() {
        TableLog log = new TableLog();
        log.append(List.of(e("a1"), e("a2")), 10);
        log.append(List.of(e("b1"), e("b2"), e("b3")), 20);
        log.append(List.of(e("c1")), 30);

        TableLog.Page first = log.read(0, 3);
        assertThat(texts(first)).as("the second transaction is not cut at 3 rows").containsExactly("a1", "a2", "b1",
                "b2", "b3");
        assertThat(first.lastVersion()).isEqualTo(20);
        assertThat(first.more()).isTrue();
        TableLog.Page rest = log.read(20, 3);
        assertThat(texts(rest)).containsExactly("c1");
        assertThat(rest.more()).isFalse();
        assertThat(log.read(30, 3).elements()).isEmpty();
        assertThat(texts(log.read(0, 1))).containsExactly("a1", "a2");
    }

    @Test
    void a_truncate_ends_the_page_before_it_and_is_a_page_of_its_own_with_what_its_transaction_wrote_after_it() {
        TableLog log = new TableLog();
        log.append(List.of(e("a")), 10);
        log.appendTruncate(20, List.of(e("after, same transaction")));
        log.append(List.of(e("later")), 30);

        TableLog.Page before = log.read(0, 100);
        assertThat(texts(before)).containsExactly("a");
        assertThat(before.truncate()).isFalse();
        assertThat(before.more()).isTrue();
        TableLog.Page truncate = log.read(10, 100);
        assertThat(truncate.truncate()).isTrue();
        assertThat(truncate.lastVersion()).isEqualTo(20);
        assertThat(texts(truncate)).containsExactly("after, same transaction");
        assertThat(truncate.more()).isTrue();
        assertThat(texts(log.read(20, 100))).containsExactly("later");
    }

    @Test
    void released_changes_are_gone_and_a_read_from_below_them_fails_instead_of_skipping() {
        TableLog log = new TableLog();
        log.append(List.of(e("a")), 10);
        log.append(List.of(e("b")), 20);
        log.release(10);
        assertThat(log.size()).isEqualTo(1);
        assertThat(log.bytes()).as("the bytes of what it holds").isEqualTo(1);
        assertThat(texts(log.read(10, 100))).containsExactly("b");
        assertThatThrownBy(() -> log.read(5, 100)).isInstanceOf(TableLog.Released.class)
                .hasMessageContaining("after version 5").hasMessageContaining("stored version 10")
                .extracting(e -> ((TableLog.Released) e).reasonCode())
                .isEqualTo(PostgresLogicalCapture.AGED_OUT_REASON_CODE);
        log.release(5);
        assertThat(texts(log.read(10, 100))).as("the floor never goes down").containsExactly("b");
        assertThatThrownBy(() -> log.read(7, 100)).isInstanceOf(IllegalStateException.class);
    }

    @Test
    void a_transaction_too_large_to_hold_drops_what_the_log_held_through_it_and_a_read_below_it_says_so() {
        TableLog log = new TableLog();
        log.append(List.of(e("a")), 10);
        log.appendTruncate(20, List.of());
        log.dropThrough(20); // the transaction at 20 changed more rows than were held: none of them is here
        log.append(List.of(e("c")), 30);

        assertThat(log.size()).as("the change before it goes too: the table whole replaces both").isEqualTo(1);
        assertThatThrownBy(() -> log.read(10, 100)).isInstanceOf(TableLog.Released.class)
                .hasMessageContaining("after version 10").hasMessageContaining("transaction committed at version 20")
                .hasMessageContaining("maxTransactionChanges")
                .extracting(e -> ((TableLog.Released) e).reasonCode())
                .isEqualTo(PostgresLogicalCapture.OVERSIZED_TRANSACTION_REASON_CODE);
        assertThat(texts(log.read(20, 100))).as("a reader at it or past it reads on").containsExactly("c");

        log.release(15);
        assertThatThrownBy(() -> log.read(10, 100)).as("a lower release keeps the floor and its reason")
                .extracting(e -> ((TableLog.Released) e).reasonCode())
                .isEqualTo(PostgresLogicalCapture.OVERSIZED_TRANSACTION_REASON_CODE);
        log.release(30);
        assertThatThrownBy(() -> log.read(20, 100)).as("once readers stored past it, a read below is merely behind")
                .extracting(e -> ((TableLog.Released) e).reasonCode())
                .isEqualTo(PostgresLogicalCapture.AGED_OUT_REASON_CODE);
    }
}
