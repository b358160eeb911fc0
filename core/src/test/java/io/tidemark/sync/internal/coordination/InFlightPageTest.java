package io.tidemark.sync.internal.coordination;

import org.junit.jupiter.api.Test;

import java.util.List;

import static org.assertj.core.api.Assertions.assertThat;

/** The record of a page in flight, as kept on the lease row, and at which position it can be delivered again. */
class InFlightPageTest {

    @Test
    void the_record_reads_back_as_it_was_written() {
        InFlightPage page = new InFlightPage(5, 15, 2, 3, 20, 50, 9, true, List.of("d1", "d\"2"));

        assertThat(InFlightPage.parse(page.toText())).hasValue(page);
    }

    @Test
    void anything_else_in_the_column_is_no_record() {
        assertThat(InFlightPage.parse("not json")).isEmpty();
        assertThat(InFlightPage.parse("{\"from\":1}")).isEmpty();
        assertThat(InFlightPage.parse("{\"from\":5,\"to\":15,\"page\":2,\"pages\":3,\"total\":50,"
                + "\"resumable\":true,\"destinations\":[\"d1\"]}"))
                .as("a record without the page size and the boundary before the page cannot be checked").isEmpty();
    }

    @Test
    void it_resumes_only_at_the_boundary_recorded_before_the_page_and_only_when_resumable() {
        InFlightPage page = new InFlightPage(5, 15, 2, 3, 4, 10, 8, true, List.of("d1"));

        assertThat(page.resumesAt(8)).isTrue();
        assertThat(page.resumesAt(5)).as("before the boundary: pages before this one were not all taken").isFalse();
        assertThat(page.resumesAt(9)).as("moved since by someone else: re-reading from the page would skip")
                .isFalse();
        assertThat(new InFlightPage(5, 15, 1, 1, 20, 10, 5, true, List.of("d1")).resumesAt(5)).isTrue();
        assertThat(new InFlightPage(5, 15, 1, 1, 20, 10, 15, true, List.of("d1")).resumesAt(15))
                .as("the page's response was stored already").isFalse();
        assertThat(new InFlightPage(5, 15, 1, 1, 20, 10, 5, false, List.of("d1")).resumesAt(5))
                .as("a FULL response cannot be cut again").isFalse();
    }
}
