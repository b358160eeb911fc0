package io.tidemark.kafka.internal;

import io.tidemark.sync.ChangeBatch;
import io.tidemark.sync.SyncType;
import io.tidemark.sync.spi.DeliveryException;
import org.junit.jupiter.api.Test;

import java.util.List;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.catchThrowableOfType;

class TopicNamesTest {

    private static ChangeBatch of(String object) {
        return new ChangeBatch(object, 0, 1, SyncType.DIFF, 0, List.of(), 1, 1, 0);
    }

    @Test
    void a_pattern_and_a_function_name_a_topic_per_object() {
        assertThat(TopicNames.pattern("tidemark.{object}.v1").of(of("Items"))).isEqualTo("tidemark.Items.v1");
        assertThat(TopicNames.function(o -> "t-" + o.toLowerCase()).of(of("Items"))).isEqualTo("t-items");
        assertThat(TopicNames.fixed("all").of(of("Items"))).isEqualTo("all");
    }

    @Test
    void a_name_kafka_refuses_is_a_fatal_error_naming_the_object() {
        DeliveryException e = catchThrowableOfType(DeliveryException.class,
                () -> TopicNames.pattern("tidemark.{object}").of(of("dbo/Items")));

        assertThat(e.isRetryable()).isFalse();
        assertThat(e).hasMessageContaining("the topic for object 'dbo/Items' is 'tidemark.dbo/Items'");
        assertThat(TopicNames.isLegal("..")).isFalse();
        assertThat(TopicNames.isLegal("a".repeat(250))).isFalse();
        assertThat(TopicNames.isLegal("a".repeat(249))).isTrue();
    }

    @Test
    void a_failing_naming_function_is_fatal() {
        DeliveryException e = catchThrowableOfType(DeliveryException.class,
                () -> TopicNames.function(o -> {
                    throw new IllegalArgumentException("unknown object " + o);
                }).of(of("Items")));

        assertThat(e.isRetryable()).isFalse();
        assertThat(e).hasMessageContaining("unknown object Items");
    }
}
