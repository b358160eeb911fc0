package io.tidemark.postgres.internal.wake;

import org.junit.jupiter.api.Test;

import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.Optional;

import static org.assertj.core.api.Assertions.assertThat;

class ArmHintTest {

    private static Optional<ArmHint.Read> read(String json) {
        return ArmHint.read(json.getBytes(StandardCharsets.UTF_8));
    }

    @Test
    void a_generated_answer_names_the_arm_function_its_horizon_and_where_it_ends() {
        Optional<ArmHint.Read> read = read("{\"Metadata\":{\"Sync\":{\"Version\":99,\"Type\":\"Diff\",\"ReasonCode\":0},"
                + "\"Outbox\":{\"Horizon\":100,\"HeldBack\":false,\"Arm\":\"public.items_outbox_arm\"}},"
                + "\"Data\":[{\"$operation\":\"I\"}]}");

        assertThat(read).contains(new ArmHint.Read("public.items_outbox_arm", 100, 99, true));
        assertThat(read.get().reachedHorizon()).isTrue();
    }

    @Test
    void an_answer_with_no_change_says_so_whatever_comes_between_metadata_and_data() {
        assertThat(read("{\"Metadata\":{\"Sync\":{\"Version\":99},\"Outbox\":{\"Horizon\":100,\"Arm\":\"a.b\"}},"
                + "\"Data\":[]}")).contains(new ArmHint.Read("a.b", 100, 99, false));
        assertThat(read("{\"Metadata\":{\"Sync\":{\"Version\":99},\"Outbox\":{\"Horizon\":100,\"Arm\":\"a.b\"}},"
                + "\"Other\":{\"x\":[1]},\"Data\":[{\"$version\":7}]}")).map(ArmHint.Read::changes).contains(true);
        assertThat(read("{\"Metadata\":{\"Sync\":{\"Version\":99},\"Outbox\":{\"Horizon\":100,\"Arm\":\"a.b\"}}}"))
                .as("no Data at all: nothing returned").map(ArmHint.Read::changes).contains(false);
    }

    @Test
    void a_page_cut_short_by_max_rows_has_not_reached_the_horizon() {
        assertThat(read("{\"Metadata\":{\"Sync\":{\"Version\":42},\"Outbox\":{\"Horizon\":100,\"Arm\":\"a.b\"}},"
                + "\"Data\":[]}").map(ArmHint.Read::reachedHorizon)).contains(false);
    }

    @Test
    void answers_without_the_hint_are_not_armed() {
        assertThat(read("{\"Metadata\":{\"Sync\":{\"Version\":99},\"Outbox\":{\"Horizon\":100,\"HeldBack\":true}},"
                + "\"Data\":[]}")).as("wake-ups off, or an outbox of an earlier version").isEmpty();
        assertThat(read("{\"Data\":[],\"Metadata\":{\"Sync\":{\"Version\":1}}}")).isEmpty();
        assertThat(read("not json")).isEmpty();
        assertThat(ArmHint.read(null)).isEmpty();
    }

    @Test
    void confirming_reads_wait_one_millisecond_then_twice_as_long_up_to_a_tenth_of_a_second() {
        assertThat(ArmedWakeUps.delay(0)).isEqualTo(Duration.ofMillis(1));
        assertThat(ArmedWakeUps.delay(3)).isEqualTo(Duration.ofMillis(8));
        assertThat(ArmedWakeUps.delay(7)).isEqualTo(Duration.ofMillis(100));
        assertThat(ArmedWakeUps.delay(1_000)).isEqualTo(Duration.ofMillis(100));
    }

    @Test
    void after_a_failed_arm_the_object_is_read_again_after_ten_milliseconds_doubling_up_to_ten_seconds() {
        assertThat(ArmedWakeUps.failureDelay(0)).isEqualTo(Duration.ofMillis(10));
        assertThat(ArmedWakeUps.failureDelay(2)).isEqualTo(Duration.ofMillis(40));
        assertThat(ArmedWakeUps.failureDelay(10)).isEqualTo(Duration.ofSeconds(10));
        assertThat(ArmedWakeUps.failureDelay(1_000)).isEqualTo(Duration.ofSeconds(10));
    }

    @Test
    void the_wait_while_changes_flow_doubles_after_a_wait_that_found_nothing_and_halves_after_eight_that_found_some() {
        ArmedWakeUps.FlowWait flow = new ArmedWakeUps.FlowWait();
        assertThat(flow.found()).isEqualTo(Duration.ofMillis(1));
        flow.foundNothing();
        assertThat(flow.found()).isEqualTo(Duration.ofMillis(2));
        flow.foundNothing();
        flow.foundNothing(); // no wait came before it: says nothing about the pace
        assertThat(flow.found()).isEqualTo(Duration.ofMillis(4));
        flow.foundNothing();
        assertThat(flow.found()).isEqualTo(Duration.ofMillis(8));
        flow.foundNothing();
        assertThat(flow.found()).as("at most FLOW_LONGEST").isEqualTo(ArmedWakeUps.FLOW_LONGEST)
                .isEqualTo(Duration.ofMillis(10));
        for (int i = 1; i < ArmedWakeUps.FlowWait.PROBE_AFTER; i++) {
            assertThat(flow.found()).isEqualTo(Duration.ofMillis(10));
        }
        assertThat(flow.found()).as("eight waits in a row found changes: try a shorter one")
                .isEqualTo(Duration.ofMillis(5));
    }
}
