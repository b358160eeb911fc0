package io.tidemark.kafka.connect;

import org.apache.kafka.common.config.Config;
import org.apache.kafka.common.config.ConfigDef;
import org.apache.kafka.common.config.ConfigException;
import org.apache.kafka.common.config.ConfigValue;
import org.apache.kafka.connect.connector.Task;
import org.apache.kafka.connect.source.ConnectorTransactionBoundaries;
import org.apache.kafka.connect.source.ExactlyOnceSupport;
import org.apache.kafka.connect.source.SourceConnector;

import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

/**
 * A Kafka Connect source connector whose tasks call Tidemark change procedures (PostgreSQL functions, SQL Server
 * procedures) under the procedure contract: each tracked object is a source partition, its version the offset.
 * The objects are spread over at most {@code tasks.max} tasks, each object handled by exactly one task.
 *
 * <p>Supports exactly-once source delivery (KIP-618): a task's records and offsets are written in one transaction,
 * and a transaction ends only at a version boundary.
 */
public class TidemarkSourceConnector extends SourceConnector {

    /** The connector's version, as Connect shows it. */
    public static final String VERSION = "0.1.0";

    private Map<String, String> props;
    private TidemarkSourceConfig config;

    @Override
    public String version() {
        return VERSION;
    }

    @Override
    public void start(Map<String, String> props) {
        this.config = new TidemarkSourceConfig(props);
        this.props = Map.copyOf(props);
    }

    @Override
    public Class<? extends Task> taskClass() {
        return TidemarkSourceTask.class;
    }

    /** Deals the objects round-robin over {@code min(maxTasks, objects)} tasks: each object to exactly one task. */
    @Override
    public List<Map<String, String>> taskConfigs(int maxTasks) {
        List<ObjectSettings> objects = config.objects();
        int tasks = Math.min(maxTasks, objects.size());
        List<List<String>> names = new ArrayList<>();
        for (int i = 0; i < tasks; i++) {
            names.add(new ArrayList<>());
        }
        for (int i = 0; i < objects.size(); i++) {
            names.get(i % tasks).add(objects.get(i).object().name());
        }
        List<Map<String, String>> configs = new ArrayList<>();
        for (List<String> assigned : names) {
            Map<String, String> task = new HashMap<>(props);
            task.put(TidemarkSourceConfig.TASK_OBJECTS, String.join(",", assigned));
            configs.add(task);
        }
        return configs;
    }

    @Override
    public void stop() {
        // The tasks hold the connections; the connector itself holds nothing.
    }

    @Override
    public ConfigDef config() {
        return TidemarkSourceConfig.CONFIG_DEF;
    }

    /**
     * Validates the keys of the listed objects as well as the static ones, then core's rules for tracked objects
     * (reported on {@value TidemarkSourceConfig#OBJECTS}).
     */
    @Override
    public Config validate(Map<String, String> connectorConfigs) {
        ConfigDef def = TidemarkSourceConfig.definition(connectorConfigs);
        List<ConfigValue> values = def.validate(connectorConfigs);
        boolean clean = values.stream().allMatch(v -> v.errorMessages().isEmpty());
        if (clean) {
            try {
                new TidemarkSourceConfig(connectorConfigs);
            } catch (ConfigException e) {
                values.stream().filter(v -> v.name().equals(TidemarkSourceConfig.OBJECTS)).findFirst()
                        .ifPresent(v -> v.addErrorMessage(e.getMessage()));
            }
        }
        return new Config(values);
    }

    /** Supported: offsets are versions, and a task resumes from the one committed with the records. */
    @Override
    public ExactlyOnceSupport exactlyOnceSupport(Map<String, String> connectorConfig) {
        return ExactlyOnceSupport.SUPPORTED;
    }

    /** Supported: the tasks end transactions at version boundaries ({@code transaction.boundary=connector}). */
    @Override
    public ConnectorTransactionBoundaries canDefineTransactionBoundaries(Map<String, String> connectorConfig) {
        return ConnectorTransactionBoundaries.SUPPORTED;
    }
}
