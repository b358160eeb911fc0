package io.tidemark.kafka;

import io.tidemark.sync.ErrorCode;
import io.tidemark.sync.TidemarkException;
import org.junit.jupiter.api.Test;

import java.time.Duration;
import java.util.Map;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/** build() checks everything at once and names each property; no broker is needed to refuse a configuration. */
class KafkaDestinationConfigurationTest {

    private static KafkaDestination.Builder valid() {
        return KafkaDestination.builder().bootstrapServers("localhost:1").topic("items").keyColumns("id");
    }

    private static String problems(KafkaDestination.Builder builder) {
        TidemarkException e = (TidemarkException) org.assertj.core.api.Assertions.catchThrowable(builder::build);
        assertThat(e).isNotNull();
        assertThat(e.code()).isEqualTo(ErrorCode.INVALID_CONFIGURATION);
        return e.getMessage();
    }

    @Test
    void a_valid_configuration_builds_and_closes_without_a_broker() {
        try (KafkaDestination destination = valid().closeTimeout(Duration.ZERO).build()) {
            assertThat(destination.toString()).contains("items");
        }
    }

    @Test
    void every_problem_is_reported_at_once_naming_its_property() {
        String message = problems(KafkaDestination.builder()
                .topic("items").topicPattern("x.{object}")
                .keyColumns("id", "id")
                .closeTimeout(Duration.ofSeconds(-1)));

        assertThat(message)
                .contains("KafkaDestination")
                .contains("exactly one of topic, topicPattern and topicPerObject")
                .contains("keyColumns lists a field twice")
                .contains("closeTimeout")
                .contains("bootstrapServers must be set");
    }

    @Test
    void topic_names_are_checked_against_kafkas_rule() {
        assertThat(problems(valid().topic("items/eu"))).contains("topic 'items/eu' is not a topic name");
        assertThat(problems(KafkaDestination.builder().bootstrapServers("localhost:1").keyColumns("id")
                .topicPattern("tidemark.items"))).contains("topicPattern 'tidemark.items' must contain {object}");
        assertThat(problems(KafkaDestination.builder().bootstrapServers("localhost:1").keyColumns("id")
                .topicPattern("tidemark {object}"))).contains("topicPattern 'tidemark {object}' gives no legal");
        assertThat(problems(KafkaDestination.builder().bootstrapServers("localhost:1").keyColumns("id")))
                .contains("exactly one of topic, topicPattern and topicPerObject must be set, got 0");
    }

    @Test
    void key_columns_are_required() {
        assertThat(problems(KafkaDestination.builder().bootstrapServers("localhost:1").topic("items")))
                .contains("keyColumns must name at least one field");
        assertThat(problems(valid().keyColumns("id", null))).contains("keyColumns");
        assertThat(problems(valid().objectKeyColumns("Orders"))).contains("objectKeyColumns(Orders)");
    }

    @Test
    void the_properties_the_guarantees_rest_on_cannot_be_overridden() {
        String message = problems(valid()
                .producerProperty("enable.idempotence", "false")
                .producerProperty("acks", "1")
                .producerProperty("key.serializer", "org.apache.kafka.common.serialization.StringSerializer")
                .producerProperty("transactional.id", "t1"));

        assertThat(message)
                .contains("producer property enable.idempotence must stay true (was false)")
                .contains("producer property acks must stay all (was 1)")
                .contains("producer property key.serializer is set by the destination")
                .contains("producer property transactional.id is set by the destination: use transactionalId(...)");
    }

    @Test
    void bootstrap_servers_may_come_from_the_properties_but_not_twice_differently() {
        try (KafkaDestination d = KafkaDestination.builder().topic("items").keyColumns("id")
                .producerProperties(Map.of("bootstrap.servers", "localhost:1")).closeTimeout(Duration.ZERO).build()) {
            assertThat(d).isNotNull();
        }
        assertThat(problems(valid().producerProperty("bootstrap.servers", "other:9092")))
                .contains("bootstrapServers (localhost:1) and producer property bootstrap.servers (other:9092) differ");
        assertThat(problems(valid().transactionalId(" "))).contains("transactionalId must not be blank");
    }

    @Test
    void kafkas_own_check_of_a_property_is_reported_as_a_configuration_error_naming_it() {
        assertThat(problems(valid().producerProperty("linger.ms", "soon")))
                .contains("the producer refused its properties")
                .contains("linger.ms");
    }

    @Test
    void bootstrap_servers_none_of_which_resolves_are_a_configuration_error() {
        assertThat(problems(valid().bootstrapServers("no-such-broker.invalid:9092")))
                .contains("the producer refused its properties")
                .contains("bootstrap");
    }

    @Test
    void null_names_are_refused() {
        assertThatThrownBy(() -> valid().producerProperty(null, "x").build())
                .isInstanceOf(TidemarkException.class)
                .hasMessageContaining("producer property names must not be null");
    }
}
