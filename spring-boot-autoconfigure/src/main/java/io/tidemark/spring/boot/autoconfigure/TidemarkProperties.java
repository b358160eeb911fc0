package io.tidemark.spring.boot.autoconfigure;

import io.tidemark.sync.DestinationStart;
import io.tidemark.sync.InitialSync;
import io.tidemark.sync.DeliveryPolicy;
import org.springframework.boot.context.properties.ConfigurationProperties;
import org.springframework.boot.context.properties.bind.DefaultValue;
import org.springframework.util.unit.DataSize;

import java.nio.file.Path;
import java.time.Duration;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * The {@code tidemark.*} properties: the engine, its stores, the tracked objects, the destinations, and the change
 * context of web requests. Bound once, through the constructor, and immutable; the auto-configuration turns them into
 * a {@code SyncEngine} in one place ({@code EngineAssembler}), after checking every value at once.
 */
@ConfigurationProperties("tidemark")
public final class TidemarkProperties {

    /** Where the tracked objects' changes come from. */
    public enum Provider {
        /** PostgreSQL change functions (tidemark-postgres). */
        POSTGRES,
        /**
         * PostgreSQL's write-ahead log through logical decoding (tidemark-postgres): the objects name tables, not
         * functions, and tidemark.logical.* configures the slot and its replication connection.
         */
        POSTGRES_LOGICAL,
        /** SQL Server stored procedures (tidemark-sqlserver must be on the class path). */
        SQLSERVER
    }

    /** Where the watermarks and dead letters are kept. */
    public enum StoreType {
        /** Tables in the application's database (the DataSource), created on start unless told otherwise. */
        JDBC,
        /** In memory, lost at every restart: for tests and demos only. */
        MEMORY
    }

    /** How a destination is made. */
    public enum DestinationType {
        /** A {@code Destination} bean of the application with the destination's name. */
        BEAN,
        /** An HTTP webhook (tidemark-destinations). */
        WEBHOOK,
        /** JSON-lines files in a folder (tidemark-destinations). */
        JSON_LINES,
        /** Rows of a table over JDBC (tidemark-destinations). */
        JDBC_TABLE
    }

    /** Whether to create the engine; false leaves the application without one. */
    private final boolean enabled;

    /** The engine's name, for its threads and logs. */
    private final String name;

    /**
     * The change provider: postgres (change functions), postgres-logical (the write-ahead log, see
     * tidemark.logical.*), or sqlserver when tidemark-sqlserver is on the class path.
     */
    private final Provider provider;

    /** Default interval between background polls of an object. */
    private final Duration pollInterval;

    /** Default largest number of changes handed to a destination in one batch. */
    private final int pageSize;

    /** Number of poller threads; unset means the number of objects, at most 4. */
    private final Integer threads;

    /**
     * How long stopping the application lets running cycles finish before they are cancelled. Keep it below
     * spring.lifecycle.timeout-per-shutdown-phase (30 s by default).
     */
    private final Duration shutdownTimeout;

    /** Whether to start polling with the application context; false leaves starting to the application. */
    private final boolean autoStartup;

    /**
     * Whether to run the engine's start-up check when it is created: the database and stores reachable, every
     * procedure present with the contract's signature. A problem fails start-up.
     */
    private final boolean checkOnStart;

    /** The watermark and dead-letter stores. */
    private final Store store;

    /** The tracked objects, by name (the key of each object's stored watermark). */
    private final Map<String, TrackedObjectProperties> objects;

    /**
     * Destinations by name: made from these properties (type webhook, json-lines, jdbc-table) or a Destination bean
     * of that name (type bean, the default), with its delivery policy. Destination beans without an entry here are
     * registered under their bean name with the default policy.
     */
    private final Map<String, DestinationProperties> destinations;

    /** History: the change context of web requests. */
    private final History history;

    /** Running on several instances: leases that spread the objects over the live instances. */
    private final Coordination coordination;

    /** The log-based capture, used when tidemark.provider is postgres-logical. */
    private final Logical logical;

    public TidemarkProperties(@DefaultValue("true") boolean enabled, @DefaultValue("tidemark") String name,
                              @DefaultValue("postgres") Provider provider,
                              @DefaultValue("30s") Duration pollInterval, @DefaultValue("1000") int pageSize,
                              Integer threads, @DefaultValue("30s") Duration shutdownTimeout,
                              @DefaultValue("true") boolean autoStartup, @DefaultValue("false") boolean checkOnStart,
                              @DefaultValue Store store, Map<String, TrackedObjectProperties> objects,
                              Map<String, DestinationProperties> destinations, @DefaultValue History history,
                              @DefaultValue Coordination coordination, @DefaultValue Logical logical) {
        this.enabled = enabled;
        this.name = name;
        this.provider = provider;
        this.pollInterval = pollInterval;
        this.pageSize = pageSize;
        this.threads = threads;
        this.shutdownTimeout = shutdownTimeout;
        this.autoStartup = autoStartup;
        this.checkOnStart = checkOnStart;
        this.store = store;
        this.objects = objects == null ? Map.of() : new LinkedHashMap<>(objects);
        this.destinations = destinations == null ? Map.of() : new LinkedHashMap<>(destinations);
        this.history = history;
        this.coordination = coordination;
        this.logical = logical;
    }

    public boolean isEnabled() {
        return enabled;
    }

    public String getName() {
        return name;
    }

    public Provider getProvider() {
        return provider;
    }

    public Duration getPollInterval() {
        return pollInterval;
    }

    public int getPageSize() {
        return pageSize;
    }

    public Integer getThreads() {
        return threads;
    }

    public Duration getShutdownTimeout() {
        return shutdownTimeout;
    }

    public boolean isAutoStartup() {
        return autoStartup;
    }

    public boolean isCheckOnStart() {
        return checkOnStart;
    }

    public Store getStore() {
        return store;
    }

    public Map<String, TrackedObjectProperties> getObjects() {
        return objects;
    }

    public Map<String, DestinationProperties> getDestinations() {
        return destinations;
    }

    public History getHistory() {
        return history;
    }

    public Coordination getCoordination() {
        return coordination;
    }

    public Logical getLogical() {
        return logical;
    }

    /**
     * Running on several instances ({@code tidemark.coordination.*}): each object is processed by one instance at a
     * time under a lease kept in the watermark store's database, and the objects are spread over the live instances.
     * Needs {@code tidemark.store.type=jdbc}.
     */
    public static final class Coordination {

        /**
         * Whether the instances of the application coordinate through leases; turn it on when the application runs
         * on more than one instance, or every instance delivers every change.
         */
        private final boolean enabled;

        /**
         * How long an instance holds an object's lease without renewing it; a dead instance's objects are taken
         * over within this plus a third of it. At least 1s.
         */
        private final Duration leaseDuration;

        /** This instance's id among the instances; unset means host name, process id and a random part. */
        private final String instanceId;

        public Coordination(@DefaultValue("false") boolean enabled, @DefaultValue("15s") Duration leaseDuration,
                            String instanceId) {
            this.enabled = enabled;
            this.leaseDuration = leaseDuration;
            this.instanceId = instanceId;
        }

        public boolean isEnabled() {
            return enabled;
        }

        public Duration getLeaseDuration() {
            return leaseDuration;
        }

        public String getInstanceId() {
            return instanceId;
        }
    }

    /**
     * The log-based capture ({@code tidemark.logical.*}), read when {@code tidemark.provider} is postgres-logical:
     * a publication of the objects' tables, a replication slot that keeps the WAL until every object has stored its
     * watermark, and the replication connection that streams it.
     */
    public static final class Logical {

        /**
         * The replication slot: 1 to 63 lower-case letters, digits and underscores. Engines on several instances
         * need a slot each.
         */
        private final String slot;

        /** The publication naming the tables; unset means the slot's name. Same characters as the slot. */
        private final String publication;

        /**
         * Whether tables log whole old rows (REPLICA IDENTITY FULL, set by the install): updates then carry
         * $changed and deletes the whole old row, at the price of the old row's bytes in the WAL of every update
         * and delete.
         */
        private final boolean oldRows;

        /**
         * Whether to install the capture (replica identities, publication, slot) through the application's
         * DataSource when the engine is created. Off by default: a slot is a server-wide commitment that outlives
         * the application and keeps WAL on the primary's disk until it is dropped, so creating one (or a second
         * one, after the slot's name changes) should be a deliberate step, not a side effect of starting an
         * application that happens to point at a database; the install also needs the REPLICATION attribute and
         * ownership of the tables for the application's role, and an ACCESS EXCLUSIVE lock per table with
         * old-rows. Turn it on where that is wanted (development, tests, a dedicated role), or have a DBA run the
         * capture's script().
         */
        private final boolean install;

        /**
         * The JDBC URL of the replication connection (jdbc:postgresql:...); unset means spring.datasource.url. A
         * pool cannot lend a replication connection, so the capture opens its own.
         */
        private final String url;

        /**
         * The role of the replication connection, with the REPLICATION attribute; unset means
         * spring.datasource.username.
         */
        private final String username;

        /** The password of the replication connection; unset means spring.datasource.password. */
        private final String password;

        /** How often the stored watermarks are read and the slot moved past what every object stored. */
        private final Duration acknowledgeEvery;

        /** How often the stream reports its position to the server when nothing else is said. */
        private final Duration statusInterval;

        /**
         * The shortest time between two reads that commits wake: commits within it are read together. Bounds the
         * watermark writes under a steady flow for at most this much delay; 0s reads at every commit.
         */
        private final Duration readInterval;

        /**
         * The most changes kept in memory before the stream stops reading and the server keeps the WAL instead.
         * At least 1000.
         */
        private final int maxBufferedChanges;

        /** As max-buffered-changes, for the bytes of the changes kept. At least 1MB. */
        private final DataSize maxBufferedBytes;

        /**
         * The most changes of one transaction held in memory while it is decoded, all its tables together. The change
         * one past it lets go of its table, whose objects get it whole after the commit (ReasonCode 3). At least 1000.
         */
        private final int maxTransactionChanges;

        /** As max-transaction-changes, for the heap the held changes' rows take. At least 1MB. */
        private final DataSize maxTransactionBytes;

        /** Warn (SLOT_WAL_RETAINED) when the slot keeps more WAL than this. */
        private final DataSize slotLagWarning;

        /** How often the WAL the slot keeps is checked (one query). */
        private final Duration slotLagCheckInterval;

        public Logical(@DefaultValue("tidemark") String slot, String publication,
                       @DefaultValue("false") boolean oldRows, @DefaultValue("false") boolean install, String url,
                       String username, String password, @DefaultValue("10s") Duration acknowledgeEvery,
                       @DefaultValue("10s") Duration statusInterval, @DefaultValue("6ms") Duration readInterval,
                       @DefaultValue("200000") int maxBufferedChanges, @DefaultValue("256MB") DataSize maxBufferedBytes,
                       @DefaultValue("200000") int maxTransactionChanges,
                       @DefaultValue("128MB") DataSize maxTransactionBytes, @DefaultValue("1GB") DataSize slotLagWarning,
                       @DefaultValue("1m") Duration slotLagCheckInterval) {
            this.slot = slot;
            this.publication = publication;
            this.oldRows = oldRows;
            this.install = install;
            this.url = url;
            this.username = username;
            this.password = password;
            this.acknowledgeEvery = acknowledgeEvery;
            this.statusInterval = statusInterval;
            this.readInterval = readInterval;
            this.maxBufferedChanges = maxBufferedChanges;
            this.maxBufferedBytes = maxBufferedBytes;
            this.maxTransactionChanges = maxTransactionChanges;
            this.maxTransactionBytes = maxTransactionBytes;
            this.slotLagWarning = slotLagWarning;
            this.slotLagCheckInterval = slotLagCheckInterval;
        }

        public String getSlot() {
            return slot;
        }

        public String getPublication() {
            return publication;
        }

        public boolean isOldRows() {
            return oldRows;
        }

        public boolean isInstall() {
            return install;
        }

        public String getUrl() {
            return url;
        }

        public String getUsername() {
            return username;
        }

        public String getPassword() {
            return password;
        }

        public Duration getAcknowledgeEvery() {
            return acknowledgeEvery;
        }

        public Duration getStatusInterval() {
            return statusInterval;
        }

        public Duration getReadInterval() {
            return readInterval;
        }

        public int getMaxBufferedChanges() {
            return maxBufferedChanges;
        }

        public DataSize getMaxBufferedBytes() {
            return maxBufferedBytes;
        }

        public int getMaxTransactionChanges() {
            return maxTransactionChanges;
        }

        public DataSize getMaxTransactionBytes() {
            return maxTransactionBytes;
        }

        public DataSize getSlotLagWarning() {
            return slotLagWarning;
        }

        public Duration getSlotLagCheckInterval() {
            return slotLagCheckInterval;
        }
    }

    /** The watermark and dead-letter stores ({@code tidemark.store.*}). */
    public static final class Store {

        /** Where watermarks and dead letters are kept: jdbc (the application's DataSource) or memory. */
        private final StoreType type;

        /** The schema of the store's tables. */
        private final String schema;

        /** The watermark table. */
        private final String table;

        /** The dead-letter table. */
        private final String deadLetterTable;

        /**
         * Whether to create missing tables on start; with false, install them beforehand from the stores' script()
         * (a DBA's review, Flyway, Liquibase).
         */
        private final boolean install;

        /**
         * Whether the engine has a dead-letter store (needed by a destination whose policy is when-exhausted:
         * dead-letter).
         */
        private final boolean deadLetters;

        public Store(@DefaultValue("jdbc") StoreType type, @DefaultValue("tidemark") String schema,
                     @DefaultValue("sync_state") String table, @DefaultValue("dead_letters") String deadLetterTable,
                     @DefaultValue("true") boolean install, @DefaultValue("true") boolean deadLetters) {
            this.type = type;
            this.schema = schema;
            this.table = table;
            this.deadLetterTable = deadLetterTable;
            this.install = install;
            this.deadLetters = deadLetters;
        }

        public StoreType getType() {
            return type;
        }

        public String getSchema() {
            return schema;
        }

        public String getTable() {
            return table;
        }

        public String getDeadLetterTable() {
            return deadLetterTable;
        }

        public boolean isInstall() {
            return install;
        }

        public boolean isDeadLetters() {
            return deadLetters;
        }
    }

    /** One tracked object ({@code tidemark.objects.<name>.*}). */
    public static final class TrackedObjectProperties {

        /**
         * The change procedure (SQL Server) or function (PostgreSQL), optionally schema-qualified. Required, except
         * with provider postgres-logical, where it must be absent (the object reads its table from the WAL).
         */
        private final String procedure;

        /** What the first cycle does when no watermark is stored: full (export everything) or incremental. */
        private final InitialSync initialSync;

        /** How often this object is polled; unset means tidemark.poll-interval. */
        private final Duration pollInterval;

        /** About how many rows the procedure returns per call (the contract's maxRows hint); unset sends none. */
        private final Integer maxRows;

        /** The largest batch handed to a destination for this object; unset means tidemark.page-size. */
        private final Integer pageSize;

        /**
         * The table whose changes the object reads, optionally schema-qualified (public otherwise). Required with
         * provider postgres-logical; for the other providers optional, the table the procedure reads, for
         * diagnostics.
         */
        private final String table;

        public TrackedObjectProperties(String procedure, @DefaultValue("full") InitialSync initialSync,
                                       Duration pollInterval, Integer maxRows, Integer pageSize, String table) {
            this.procedure = procedure;
            this.initialSync = initialSync;
            this.pollInterval = pollInterval;
            this.maxRows = maxRows;
            this.pageSize = pageSize;
            this.table = table;
        }

        public String getProcedure() {
            return procedure;
        }

        public InitialSync getInitialSync() {
            return initialSync;
        }

        public Duration getPollInterval() {
            return pollInterval;
        }

        public Integer getMaxRows() {
            return maxRows;
        }

        public Integer getPageSize() {
            return pageSize;
        }

        public String getTable() {
            return table;
        }
    }

    /** One destination ({@code tidemark.destinations.<name>.*}). */
    public static final class DestinationProperties {

        /** How the destination is made: bean (a Destination bean of this name), webhook, json-lines, jdbc-table. */
        private final DestinationType type;

        /**
         * Where a destination added to objects that already deliver starts: current-position (the changes from
         * now on) or full-export (a full export for it alone first).
         */
        private final DestinationStart start;

        /** What the engine does when this destination refuses a page. */
        private final Policy policy;

        /** The webhook, when type is webhook. */
        private final Webhook webhook;

        /** The files, when type is json-lines. */
        private final JsonLines jsonLines;

        /** The table, when type is jdbc-table. */
        private final JdbcTable jdbcTable;

        public DestinationProperties(@DefaultValue("bean") DestinationType type,
                                     @DefaultValue("current-position") DestinationStart start,
                                     @DefaultValue Policy policy, @DefaultValue Webhook webhook,
                                     @DefaultValue JsonLines jsonLines, @DefaultValue JdbcTable jdbcTable) {
            this.type = type;
            this.start = start;
            this.policy = policy;
            this.webhook = webhook;
            this.jsonLines = jsonLines;
            this.jdbcTable = jdbcTable;
        }

        public DestinationType getType() {
            return type;
        }

        public DestinationStart getStart() {
            return start;
        }

        public Policy getPolicy() {
            return policy;
        }

        public Webhook getWebhook() {
            return webhook;
        }

        public JsonLines getJsonLines() {
            return jsonLines;
        }

        public JdbcTable getJdbcTable() {
            return jdbcTable;
        }
    }

    /** A destination's delivery policy ({@code tidemark.destinations.<name>.policy.*}). */
    public static final class Policy {

        /** Attempts per page within one cycle before the policy runs out. */
        private final int maxAttempts;

        /** The first retry's largest wait, doubling with each further attempt (full jitter); 0s retries at once. */
        private final Duration backoff;

        /** The largest wait between two attempts. */
        private final Duration maxDelay;

        /**
         * When the attempts run out: block (keep the position, offer the same changes again next cycle) or
         * dead-letter (store the page in the dead-letter store and carry on).
         */
        private final DeliveryPolicy.WhenExhausted whenExhausted;

        public Policy(@DefaultValue("1") int maxAttempts, @DefaultValue("0s") Duration backoff,
                      @DefaultValue("30s") Duration maxDelay,
                      @DefaultValue("block") DeliveryPolicy.WhenExhausted whenExhausted) {
            this.maxAttempts = maxAttempts;
            this.backoff = backoff;
            this.maxDelay = maxDelay;
            this.whenExhausted = whenExhausted;
        }

        public int getMaxAttempts() {
            return maxAttempts;
        }

        public Duration getBackoff() {
            return backoff;
        }

        public Duration getMaxDelay() {
            return maxDelay;
        }

        public DeliveryPolicy.WhenExhausted getWhenExhausted() {
            return whenExhausted;
        }
    }

    /** An HTTP webhook destination ({@code tidemark.destinations.<name>.webhook.*}). */
    public static final class Webhook {

        /** Where to POST each page (http or https). Required for type webhook. */
        private final String url;

        /** Headers sent with every request (a tenant, a routing key). */
        private final Map<String, String> headers;

        /** How long to wait for a connection. */
        private final Duration connectTimeout;

        /** How long to wait for the response to one request. */
        private final Duration requestTimeout;

        /** Whether to gzip each request body. */
        private final boolean gzip;

        /** The Standard Webhooks signing secret (whsec_ followed by a base64 key); unset sends no signature. */
        private final String signingSecret;

        /** The largest request body; a larger page goes as several requests. Unset means no limit. */
        private final Long maxRequestBytes;

        /** A bearer token sent as Authorization: Bearer. */
        private final String bearerToken;

        /** The user of HTTP basic authentication (with basic-password). */
        private final String basicUser;

        /** The password of HTTP basic authentication (with basic-user). */
        private final String basicPassword;

        public Webhook(String url, Map<String, String> headers, @DefaultValue("10s") Duration connectTimeout,
                       @DefaultValue("30s") Duration requestTimeout, @DefaultValue("false") boolean gzip,
                       String signingSecret, Long maxRequestBytes, String bearerToken, String basicUser,
                       String basicPassword) {
            this.url = url;
            this.headers = headers == null ? Map.of() : new LinkedHashMap<>(headers);
            this.connectTimeout = connectTimeout;
            this.requestTimeout = requestTimeout;
            this.gzip = gzip;
            this.signingSecret = signingSecret;
            this.maxRequestBytes = maxRequestBytes;
            this.bearerToken = bearerToken;
            this.basicUser = basicUser;
            this.basicPassword = basicPassword;
        }

        public String getUrl() {
            return url;
        }

        public Map<String, String> getHeaders() {
            return headers;
        }

        public Duration getConnectTimeout() {
            return connectTimeout;
        }

        public Duration getRequestTimeout() {
            return requestTimeout;
        }

        public boolean isGzip() {
            return gzip;
        }

        public String getSigningSecret() {
            return signingSecret;
        }

        public Long getMaxRequestBytes() {
            return maxRequestBytes;
        }

        public String getBearerToken() {
            return bearerToken;
        }

        public String getBasicUser() {
            return basicUser;
        }

        public String getBasicPassword() {
            return basicPassword;
        }
    }

    /** A JSON-lines files destination ({@code tidemark.destinations.<name>.json-lines.*}). */
    public static final class JsonLines {

        /** The folder the files are written to. Required for type json-lines. */
        private final Path folder;

        /** The files' name prefix; set one per destination when several write to one folder. */
        private final String prefix;

        /** Whether to gzip the files. */
        private final boolean gzip;

        /** Start a new file after this many lines; unset means one file per page. */
        private final Long rotateAfterLines;

        /** Start a new file after this many bytes; unset means one file per page. */
        private final Long rotateAfterBytes;

        /** Delete this destination's files older than this; unset keeps them. */
        private final Duration retainFor;

        /** Keep at most this many of this destination's files; unset keeps them all. */
        private final Integer retainFiles;

        /** Whether to force each file to disk before it is renamed into place. */
        private final boolean fsync;

        public JsonLines(Path folder, @DefaultValue("tidemark") String prefix, @DefaultValue("false") boolean gzip,
                         Long rotateAfterLines, Long rotateAfterBytes, Duration retainFor, Integer retainFiles,
                         @DefaultValue("true") boolean fsync) {
            this.folder = folder;
            this.prefix = prefix;
            this.gzip = gzip;
            this.rotateAfterLines = rotateAfterLines;
            this.rotateAfterBytes = rotateAfterBytes;
            this.retainFor = retainFor;
            this.retainFiles = retainFiles;
            this.fsync = fsync;
        }

        public Path getFolder() {
            return folder;
        }

        public String getPrefix() {
            return prefix;
        }

        public boolean isGzip() {
            return gzip;
        }

        public Long getRotateAfterLines() {
            return rotateAfterLines;
        }

        public Long getRotateAfterBytes() {
            return rotateAfterBytes;
        }

        public Duration getRetainFor() {
            return retainFor;
        }

        public Integer getRetainFiles() {
            return retainFiles;
        }

        public boolean isFsync() {
            return fsync;
        }
    }

    /** A JDBC table destination ({@code tidemark.destinations.<name>.jdbc-table.*}). */
    public static final class JdbcTable {

        /** The SQL dialect of the target database. */
        public enum Dialect {
            /** PostgreSQL. */
            POSTGRES,
            /** SQL Server. */
            SQLSERVER
        }

        /** The target table, optionally schema-qualified. Required for type jdbc-table. */
        private final String table;

        /** The name of the DataSource bean of the target database; unset means the application's DataSource. */
        private final String dataSource;

        /** The target database's dialect. */
        private final Dialect dialect;

        /** The table's columns, each filled from the change field of the same name. Required. */
        private final List<String> columns;

        /** The key columns that identify a row (upserts and deletes). Required. */
        private final List<String> keyColumns;

        /** Whether the destination creates its position and stage tables on first use. */
        private final boolean createTables;

        /** Rows per JDBC batch. */
        private final int batchSize;

        public JdbcTable(String table, String dataSource, @DefaultValue("postgres") Dialect dialect,
                         List<String> columns, List<String> keyColumns, @DefaultValue("true") boolean createTables,
                         @DefaultValue("1000") int batchSize) {
            this.table = table;
            this.dataSource = dataSource;
            this.dialect = dialect;
            this.columns = columns == null ? List.of() : List.copyOf(columns);
            this.keyColumns = keyColumns == null ? List.of() : List.copyOf(keyColumns);
            this.createTables = createTables;
            this.batchSize = batchSize;
        }

        public String getTable() {
            return table;
        }

        public String getDataSource() {
            return dataSource;
        }

        public Dialect getDialect() {
            return dialect;
        }

        public List<String> getColumns() {
            return columns;
        }

        public List<String> getKeyColumns() {
            return keyColumns;
        }

        public boolean isCreateTables() {
            return createTables;
        }

        public int getBatchSize() {
            return batchSize;
        }
    }

    /** History ({@code tidemark.history.*}). */
    public static final class History {

        /** The change context of web requests. */
        private final Context context;

        public History(@DefaultValue Context context) {
            this.context = context;
        }

        public Context getContext() {
            return context;
        }
    }

    /** The change context of web requests ({@code tidemark.history.context.*}). */
    public static final class Context {

        /**
         * Whether each web request's database writes carry who (the authenticated principal) and why (a header) to
         * the history triggers. Needs tidemark-history and a servlet web application.
         */
        private final boolean enabled;

        /** The request header whose value is the reason recorded with each change. */
        private final String reasonHeader;

        /** The request header whose value is the correlation id recorded with each change. */
        private final String correlationIdHeader;

        /** The prefix of the transaction settings the history triggers read (as set on the TemporalTable). */
        private final String settingsPrefix;

        /**
         * Whether to wrap the application's DataSource beans so that their connections send the context with the
         * statements (ContextualDataSource: no extra round trip). With false, wrap them yourself.
         */
        private final boolean wrapDataSource;

        /** The order of the request filter: after Spring Security's filter chain (-100), so the principal is known. */
        private final int filterOrder;

        public Context(@DefaultValue("true") boolean enabled, @DefaultValue("X-Change-Reason") String reasonHeader,
                       @DefaultValue("X-Request-Id") String correlationIdHeader,
                       @DefaultValue("tidemark") String settingsPrefix, @DefaultValue("true") boolean wrapDataSource,
                       @DefaultValue("0") int filterOrder) {
            this.enabled = enabled;
            this.reasonHeader = reasonHeader;
            this.correlationIdHeader = correlationIdHeader;
            this.settingsPrefix = settingsPrefix;
            this.wrapDataSource = wrapDataSource;
            this.filterOrder = filterOrder;
        }

        public boolean isEnabled() {
            return enabled;
        }

        public String getReasonHeader() {
            return reasonHeader;
        }

        public String getCorrelationIdHeader() {
            return correlationIdHeader;
        }

        public String getSettingsPrefix() {
            return settingsPrefix;
        }

        public boolean isWrapDataSource() {
            return wrapDataSource;
        }

        public int getFilterOrder() {
            return filterOrder;
        }
    }
}
