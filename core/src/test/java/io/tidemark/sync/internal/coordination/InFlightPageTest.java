package io.tidemark.sync.internal.coordination;

import org.junit.jupiter.api.Test;

import java.util.List;

import static org.assertj.core.api.Assertions.assertThat;

/** The record of a page in flight, as kept on the lease row, and which positions it covers. */
class InFlightPageTest {

    @Test
    void the_record_reads_back_as_it_was_written() {
        InFlightPage page = new InFlightPage(5, 15, 2, 3, 50, true, List.of("d1", "d\"2"));

        assertThat(InFlightPage.parse(page.toText())).hasValue(page);
    }

    @Test
    void anything_else_in_the_column_is_no_record() {
        assertThat(InFlightPage.parse("not json")).isEmpty();
        assertThat(InFlightPage.parse("{\"from\":1}")).isEmpty();
    }

    @Test
    void it_covers_positions_from_its_start_up_to_but_not_including_its_end_and_only_when_resumable() {
        InFlightPage page = new InFlightPage(5, 15, 1, 1, 10, true, List.of("d1"));

        assertThat(page.covers(4)).isFalse();
        assertThat(page.covers(5)).isTrue();
        assertThat(page.covers(14)).isTrue();
        assertThat(page.covers(15)).as("the page's response was stored already").isFalse();
        assertThat(new InFlightPage(5, 15, 1, 1, 10, false, List.of("d1")).covers(5))
                .as("a FULL response cannot be cut again").isFalse();
    }
}
