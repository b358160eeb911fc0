package io.tidemark.kafka.connect;

import io.tidemark.sync.InitialSync;
import io.tidemark.sync.TrackedObject;
import io.tidemark.sync.internal.config.Checks;
import io.tidemark.sync.internal.config.Defaults;
import io.tidemark.sync.internal.engine.TrackedObjectRules;
import org.apache.kafka.common.config.AbstractConfig;
import org.apache.kafka.common.config.ConfigDef;
import org.apache.kafka.common.config.ConfigDef.Importance;
import org.apache.kafka.common.config.ConfigDef.Type;
import org.apache.kafka.common.config.ConfigDef.Width;
import org.apache.kafka.common.config.ConfigException;
import org.apache.kafka.common.config.types.Password;

import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Optional;

/**
 * The connector's configuration: Connect's {@link ConfigDef} (validation and documentation) and its parsed form.
 *
 * <p>The tracked objects are listed by name in {@value #OBJECTS}; each has its own keys
 * {@code object.<name>.procedure}, {@code .key}, {@code .initial.sync}, {@code .max.rows} and {@code .topic}.
 * {@link #definition(Map)} adds those keys to the static definition for the names a configuration lists, so that
 * Connect validates and documents them like any other key.
 */
public final class TidemarkSourceConfig {

    public static final String CONNECTION_URL = "connection.url";
    public static final String CONNECTION_USER = "connection.user";
    public static final String CONNECTION_PASSWORD = "connection.password";
    public static final String OBJECTS = "tidemark.objects";
    public static final String TOPIC_PREFIX = "topic.prefix";
    public static final String POLL_INTERVAL_MS = "poll.interval.ms";
    public static final String PAGE_SIZE = "page.size";
    public static final String DELETE_TOMBSTONES = "delete.tombstones";
    public static final String POSITION_TOPIC = "position.topic";
    public static final String LISTEN = "listen";
    public static final String LISTEN_CHANNEL = "listen.channel";

    /** The objects one task handles (set by the connector in each task's configuration). */
    public static final String TASK_OBJECTS = "tidemark.task.objects";

    static final String OBJECT_PREFIX = "object.";
    static final String PROCEDURE = "procedure";
    static final String KEY = "key";
    static final String INITIAL_SYNC = "initial.sync";
    static final String MAX_ROWS = "max.rows";
    static final String TOPIC = "topic";
    static final String TABLE = "table";

    private static final String CONNECTION_GROUP = "Connection";
    private static final String OBJECTS_GROUP = "Tracked objects";
    private static final String RECORDS_GROUP = "Records";

    /** The keys every configuration has; the per-object keys are added by {@link #definition(Map)}. */
    public static final ConfigDef CONFIG_DEF = baseDefinition();

    private final String connectionUrl;
    private final Optional<String> user;
    private final Optional<Password> password;
    private final List<ObjectSettings> objects;
    private final Duration pollInterval;
    private final int pageSize;
    private final boolean deleteTombstones;
    private final String positionTopic;
    private final boolean listen;
    private final String listenChannel;

    /** Parses and checks {@code props}; throws one {@link ConfigException} listing every problem. */
    public TidemarkSourceConfig(Map<String, String> props) {
        AbstractConfig parsed = new AbstractConfig(definition(props), props, false);
        this.connectionUrl = parsed.getString(CONNECTION_URL);
        this.user = Optional.ofNullable(parsed.getString(CONNECTION_USER));
        this.password = Optional.ofNullable(parsed.getPassword(CONNECTION_PASSWORD));
        this.pollInterval = Duration.ofMillis(parsed.getLong(POLL_INTERVAL_MS));
        this.pageSize = parsed.getInt(PAGE_SIZE);
        this.deleteTombstones = parsed.getBoolean(DELETE_TOMBSTONES);
        this.positionTopic = parsed.getString(POSITION_TOPIC);
        this.listen = parsed.getBoolean(LISTEN);
        this.listenChannel = parsed.getString(LISTEN_CHANNEL);
        String topicPrefix = parsed.getString(TOPIC_PREFIX);
        List<ObjectSettings> settings = new ArrayList<>();
        Checks checks = Checks.of("Tidemark source connector");
        List<String> names = parsed.getList(OBJECTS);
        names.stream().filter(n -> java.util.Collections.frequency(names, n) > 1).distinct()
                .forEach(n -> checks.add("[" + n + "] is listed twice in " + OBJECTS));
        for (String name : new java.util.LinkedHashSet<>(names)) {
            String prefix = OBJECT_PREFIX + name + ".";
            TrackedObject object = TrackedObject.of(name, parsed.getString(prefix + PROCEDURE))
                    .initialSync(InitialSync.valueOf(parsed.getString(prefix + INITIAL_SYNC).toUpperCase(Locale.ROOT)))
                    .pollInterval(pollInterval)
                    .pageSize(pageSize);
            Integer maxRows = parsed.getInt(prefix + MAX_ROWS);
            if (maxRows != null) {
                object = object.maxRows(maxRows);
            }
            String table = parsed.getString(prefix + TABLE);
            if (table != null) {
                object = object.table(table);
            }
            TrackedObjectRules.check(checks, object);
            String topic = Optional.ofNullable(parsed.getString(prefix + TOPIC)).orElse(topicPrefix + name);
            settings.add(new ObjectSettings(object, parsed.getList(prefix + KEY), topic));
        }
        if (!checks.violations().isEmpty()) {
            throw new ConfigException("Invalid Tidemark source connector configuration: "
                    + String.join("; ", checks.violations()));
        }
        this.objects = List.copyOf(settings);
    }

    /**
     * The static definition plus, for each object {@code props} lists in {@value #OBJECTS}, its own keys. Unknown
     * names are not guessed: an object's keys exist only once the object is listed.
     */
    public static ConfigDef definition(Map<String, String> props) {
        ConfigDef def = new ConfigDef(CONFIG_DEF);
        String listed = props.get(OBJECTS);
        if (listed == null) {
            return def;
        }
        int order = 0;
        java.util.Set<String> defined = new java.util.HashSet<>();
        for (String raw : listed.split(",")) {
            String name = raw.trim();
            if (name.isEmpty() || !defined.add(name)) {
                continue; // a name listed twice is reported by the constructor, once
            }
            String prefix = OBJECT_PREFIX + name + ".";
            String group = "Object " + name;
            def.define(prefix + PROCEDURE, Type.STRING, ConfigDef.NO_DEFAULT_VALUE, new ConfigDef.NonEmptyString(),
                            Importance.HIGH, "The change procedure (SQL Server) or function (PostgreSQL) of object '"
                                    + name + "', schema-qualified, for example public.items_changes.",
                            group, ++order, Width.LONG, name + " procedure")
                    .define(prefix + KEY, Type.LIST, ConfigDef.NO_DEFAULT_VALUE, nonEmptyList(),
                            Importance.HIGH, "The JSON keys of a change that identify its row (the record key), in"
                                    + " order, for example item_code.", group, ++order, Width.MEDIUM,
                            name + " key")
                    .define(prefix + INITIAL_SYNC, Type.STRING, InitialSync.INCREMENTAL.name(),
                            ConfigDef.CaseInsensitiveValidString.in("FULL", "INCREMENTAL"), Importance.MEDIUM,
                            "What the first poll of object '" + name + "' does when Connect holds no offset for it:"
                                    + " FULL exports every row first (Type Full); INCREMENTAL records the current"
                                    + " version and delivers the changes after it.",
                            group, ++order, Width.SHORT, name + " initial sync")
                    .define(prefix + MAX_ROWS, Type.INT, null, nullOrAtLeast(1), Importance.LOW,
                            "The maxRows hint sent to the procedure of object '" + name + "' (none by default).",
                            group, ++order, Width.SHORT, name + " max rows")
                    .define(prefix + TOPIC, Type.STRING, null, Importance.MEDIUM,
                            "The topic of object '" + name + "'; " + TOPIC_PREFIX + " followed by the name if"
                                    + " not set.", group, ++order, Width.LONG, name + " topic")
                    .define(prefix + TABLE, Type.STRING, null, Importance.LOW,
                            "SQL Server: the tracked table of object '" + name + "', schema-qualified, for example"
                                    + " dbo.Items. With it, each poll checks that the version asked for is still"
                                    + " inside what Change Tracking keeps for the table and logs a"
                                    + " WATERMARK_AGED_OUT warning when it is not. Not used on PostgreSQL.",
                            group, ++order, Width.LONG, name + " table");
        }
        return def;
    }

    private static ConfigDef baseDefinition() {
        int order = 0;
        return new ConfigDef()
                .define(CONNECTION_URL, Type.STRING, ConfigDef.NO_DEFAULT_VALUE, new JdbcUrlValidator(),
                        Importance.HIGH, "The JDBC URL of the database whose procedures the connector calls:"
                                + " jdbc:postgresql://... or jdbc:sqlserver://...",
                        CONNECTION_GROUP, ++order, Width.LONG, "JDBC URL")
                .define(CONNECTION_USER, Type.STRING, null, Importance.HIGH,
                        "The database user; it needs only EXECUTE on the procedures (and LISTEN on PostgreSQL).",
                        CONNECTION_GROUP, ++order, Width.MEDIUM, "User")
                .define(CONNECTION_PASSWORD, Type.PASSWORD, null, Importance.HIGH, "The database user's password.",
                        CONNECTION_GROUP, ++order, Width.MEDIUM, "Password")
                .define(OBJECTS, Type.LIST, ConfigDef.NO_DEFAULT_VALUE, nonEmptyList(), Importance.HIGH,
                        "The names of the tracked objects, comma-separated. Each name is the source partition of"
                                + " its offsets and needs object.<name>.procedure and object.<name>.key.",
                        OBJECTS_GROUP, ++order, Width.LONG, "Tracked objects")
                .define(POLL_INTERVAL_MS, Type.LONG, 1000L, ConfigDef.Range.atLeast(1), Importance.MEDIUM,
                        "How long an object without changes waits before its procedure is called again."
                                + " A PostgreSQL notification (LISTEN) ends the wait early.",
                        OBJECTS_GROUP, ++order, Width.SHORT, "Poll interval")
                .define(LISTEN, Type.BOOLEAN, true, Importance.LOW,
                        "PostgreSQL only: wake up at each commit that the generated outbox notifies (LISTEN).",
                        OBJECTS_GROUP, ++order, Width.SHORT, "Listen")
                .define(LISTEN_CHANNEL, Type.STRING, "tidemark", new ConfigDef.NonEmptyString(), Importance.LOW,
                        "PostgreSQL only: the notification channel the outbox notifies.",
                        OBJECTS_GROUP, ++order, Width.SHORT, "Listen channel")
                .define(TOPIC_PREFIX, Type.STRING, "tidemark.", Importance.MEDIUM,
                        "Prefix of each object's topic: the topic is the prefix followed by the object's name,"
                                + " unless object.<name>.topic says otherwise.",
                        RECORDS_GROUP, ++order, Width.MEDIUM, "Topic prefix")
                .define(PAGE_SIZE, Type.INT, Defaults.PAGE_SIZE, ConfigDef.Range.between(1, 100_000),
                        Importance.LOW, "Changes per page: the page fields of the headers (as the engine pages a"
                                + " response) and about the most records one poll returns (a poll always ends at"
                                + " a version boundary, so one version's changes are never split).",
                        RECORDS_GROUP, ++order, Width.SHORT, "Page size")
                .define(DELETE_TOMBSTONES, Type.BOOLEAN, false, Importance.MEDIUM,
                        "Follow each delete (operation D) with a tombstone (same key, null value) for compacted"
                                + " topics.", RECORDS_GROUP, ++order, Width.SHORT, "Tombstones")
                .define(POSITION_TOPIC, Type.STRING, "tidemark.positions", new ConfigDef.NonEmptyString(),
                        Importance.LOW, "Where a record goes when an object's position must be stored without a"
                                + " change: the first poll of an INCREMENTAL object (its starting version) and a"
                                + " FULL export that returned no rows. Connect stores offsets only with records.",
                        RECORDS_GROUP, ++order, Width.MEDIUM, "Position topic");
    }

    private static ConfigDef.Validator nonEmptyList() {
        return ConfigDef.LambdaValidator.with((name, value) -> {
            @SuppressWarnings("unchecked")
            List<String> list = (List<String>) value;
            if (list == null || list.isEmpty() || list.stream().anyMatch(String::isBlank)) {
                throw new ConfigException(name, value, "must list at least one non-blank name");
            }
        }, () -> "a non-empty list of names");
    }

    private static ConfigDef.Validator nullOrAtLeast(int min) {
        return ConfigDef.LambdaValidator.with((name, value) -> {
            if (value != null && (Integer) value < min) {
                throw new ConfigException(name, value, "must be at least " + min);
            }
        }, () -> "empty or at least " + min);
    }

    /** Accepts the URLs of the two providers, naming both when another is given. */
    private static final class JdbcUrlValidator implements ConfigDef.Validator {
        @Override
        public void ensureValid(String name, Object value) {
            String url = (String) value;
            if (url == null || !(url.startsWith("jdbc:postgresql:") || url.startsWith("jdbc:sqlserver:"))) {
                throw new ConfigException(name, value,
                        "must be a PostgreSQL (jdbc:postgresql:) or SQL Server (jdbc:sqlserver:) JDBC URL");
            }
        }

        @Override
        public String toString() {
            return "jdbc:postgresql:... or jdbc:sqlserver:...";
        }
    }

    public String connectionUrl() {
        return connectionUrl;
    }

    public Optional<String> user() {
        return user;
    }

    public Optional<Password> password() {
        return password;
    }

    /** The tracked objects, in the order listed. */
    public List<ObjectSettings> objects() {
        return objects;
    }

    /** The objects by name. */
    public Map<String, ObjectSettings> objectsByName() {
        Map<String, ObjectSettings> byName = new LinkedHashMap<>();
        objects.forEach(o -> byName.put(o.object().name(), o));
        return byName;
    }

    public Duration pollInterval() {
        return pollInterval;
    }

    public int pageSize() {
        return pageSize;
    }

    public boolean deleteTombstones() {
        return deleteTombstones;
    }

    public String positionTopic() {
        return positionTopic;
    }

    public boolean listen() {
        return listen;
    }

    public String listenChannel() {
        return listenChannel;
    }
}
