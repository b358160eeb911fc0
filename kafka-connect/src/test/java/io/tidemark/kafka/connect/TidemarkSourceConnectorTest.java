package io.tidemark.kafka.connect;

import org.apache.kafka.common.config.Config;
import org.apache.kafka.common.config.ConfigException;
import org.apache.kafka.common.config.ConfigValue;
import org.apache.kafka.connect.source.ConnectorTransactionBoundaries;
import org.apache.kafka.connect.source.ExactlyOnceSupport;
import org.junit.jupiter.api.Test;

import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.stream.Collectors;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/** Configuration, validation and task assignment, without a cluster. */
class TidemarkSourceConnectorTest {

    private static Map<String, String> valid() {
        Map<String, String> props = new HashMap<>(ReadmeConfig.load());
        props.put("connection.password", "secret");
        return props;
    }

    @Test
    void the_readme_configuration_is_valid_and_parses_as_documented() {
        Config result = new TidemarkSourceConnector().validate(valid());
        assertThat(result.configValues()).allSatisfy(v -> assertThat(v.errorMessages()).as(v.name()).isEmpty());

        TidemarkSourceConfig config = new TidemarkSourceConfig(valid());
        assertThat(config.objects()).extracting(o -> o.object().name()).containsExactly("Items", "Orders");
        ObjectSettings orders = config.objectsByName().get("Orders");
        assertThat(orders.object().procedure()).isEqualTo("public.orders_changes");
        assertThat(orders.object().maxRows()).hasValue(5000);
        assertThat(orders.keyColumns()).containsExactly("order_id");
        assertThat(orders.topic()).isEqualTo("shop.Orders");
        assertThat(config.objectsByName().get("Items").object().initialSync().name()).isEqualTo("FULL");
        assertThat(config.deleteTombstones()).isTrue();
        assertThat(config.positionTopic()).isEqualTo("shop.tidemark-positions");
    }

    @Test
    void validation_names_each_missing_or_bad_key_of_an_object() {
        Map<String, String> props = valid();
        props.remove("object.Orders.procedure");
        props.put("object.Items.initial.sync", "SOMETIMES");
        props.put("object.Orders.max.rows", "0");
        props.put("connection.url", "jdbc:mysql://db/shop");

        Map<String, List<String>> errors = errors(new TidemarkSourceConnector().validate(props));

        assertThat(errors.get("object.Orders.procedure")).singleElement().asString().contains("no default value");
        assertThat(errors.get("object.Items.initial.sync")).singleElement().asString().contains("SOMETIMES");
        assertThat(errors.get("object.Orders.max.rows")).singleElement().asString().contains("at least 1");
        assertThat(errors.get("connection.url")).singleElement().asString().contains("jdbc:postgresql:");
        assertThatThrownBy(() -> new TidemarkSourceConfig(props)).isInstanceOf(ConfigException.class);
    }

    @Test
    void core_rules_for_tracked_objects_apply_and_are_reported_on_the_object_list() {
        Map<String, String> props = valid();
        String longName = "N".repeat(201);
        props.put("tidemark.objects", "Items," + longName);
        props.put("object." + longName + ".procedure", "public.n_changes");
        props.put("object." + longName + ".key", "id");

        Map<String, List<String>> errors = errors(new TidemarkSourceConnector().validate(props));

        assertThat(errors.get("tidemark.objects")).singleElement().asString()
                .contains("longer than 200 characters");
    }

    @Test
    void an_object_listed_twice_is_reported_once_naming_it() {
        Map<String, String> props = valid();
        props.put("tidemark.objects", "Items,Orders,Items");

        Map<String, List<String>> errors = errors(new TidemarkSourceConnector().validate(props));

        assertThat(errors.get("tidemark.objects")).singleElement().asString()
                .contains("[Items] is listed twice");
    }

    @Test
    void objects_are_spread_over_the_tasks_each_to_exactly_one() {
        Map<String, String> props = valid();
        List<String> names = new ArrayList<>();
        for (int i = 1; i <= 7; i++) {
            names.add("O" + i);
            props.put("object.O" + i + ".procedure", "public.o" + i + "_changes");
            props.put("object.O" + i + ".key", "id");
        }
        props.put("tidemark.objects", String.join(",", names));
        TidemarkSourceConnector connector = new TidemarkSourceConnector();
        connector.start(props);

        List<Map<String, String>> three = connector.taskConfigs(3);
        List<Set<String>> assigned = three.stream()
                .map(t -> Set.of(t.get(TidemarkSourceConfig.TASK_OBJECTS).split(","))).toList();
        assertThat(assigned).extracting(Set::size).containsExactly(3, 2, 2);
        assertThat(assigned.stream().flatMap(Set::stream).toList()).doesNotHaveDuplicates()
                .containsExactlyInAnyOrderElementsOf(names);
        // more tasks than objects: one object each, no idle task
        assertThat(connector.taskConfigs(20)).hasSize(7);
    }

    @Test
    void supports_exactly_once_and_defines_transaction_boundaries() {
        TidemarkSourceConnector connector = new TidemarkSourceConnector();
        assertThat(connector.exactlyOnceSupport(valid())).isEqualTo(ExactlyOnceSupport.SUPPORTED);
        assertThat(connector.canDefineTransactionBoundaries(valid()))
                .isEqualTo(ConnectorTransactionBoundaries.SUPPORTED);
    }

    @Test
    void every_key_is_documented() {
        assertThat(TidemarkSourceConfig.definition(valid()).configKeys().values())
                .allSatisfy(k -> assertThat(k.documentation).as(k.name).isNotBlank());
    }

    private static Map<String, List<String>> errors(Config config) {
        return config.configValues().stream().filter(v -> !v.errorMessages().isEmpty())
                .collect(Collectors.toMap(ConfigValue::name, ConfigValue::errorMessages));
    }
}
