package io.tidemark.sync.internal.engine;

import io.tidemark.sync.DeliveryPolicy;
import io.tidemark.sync.spi.DestinationPosition;
import io.tidemark.sync.spi.WatermarkState;
import org.junit.jupiter.api.Test;

import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;

import static org.assertj.core.api.Assertions.assertThat;

/** The watermark with coordination: the positions of destinations other live instances deliver to hold it too. */
class PositionPlanTest {

    private static final NamedDestination D1 = new NamedDestination("d1", batch -> { }, DeliveryPolicy.block());

    private static Optional<WatermarkState> stored(long watermark, Map<String, Long> positions) {
        Map<String, DestinationPosition> byName = new java.util.TreeMap<>();
        positions.forEach((name, v) -> byName.put(name, new DestinationPosition("Items", name, v, false)));
        return Optional.of(new WatermarkState("Items", watermark, false, null, null, null, "s", byName));
    }

    @Test
    void a_live_instances_destination_that_is_not_delivered_here_holds_the_watermark_at_its_position() {
        PositionPlan plan = PositionPlan.of(stored(5, Map.of("d1", 5L, "d2", 5L)), List.of(D1), Set.of("d1", "d2"));

        assertThat(plan.watermarkAfter(plan.entries(), 10)).isEqualTo(5);
    }

    @Test
    void a_destination_no_live_instance_has_holds_nothing() {
        PositionPlan plan = PositionPlan.of(stored(5, Map.of("d1", 5L, "d2", 5L)), List.of(D1), Set.of("d1"));

        assertThat(plan.watermarkAfter(plan.entries(), 10)).isEqualTo(10);
    }

    @Test
    void a_position_left_behind_the_watermark_holds_nothing_even_if_a_live_instance_has_it() {
        PositionPlan plan = PositionPlan.of(stored(5, Map.of("d1", 5L, "d3", 3L)), List.of(D1), Set.of("d1", "d3"));

        assertThat(plan.watermarkAfter(plan.entries(), 10)).isEqualTo(10);
    }
}
