package io.tidemark.spring.boot.autoconfigure.internal;

import io.tidemark.postgres.PostgresLogicalCapture;
import io.tidemark.postgres.PostgresLogicalProvider;
import io.tidemark.spring.boot.autoconfigure.TidemarkProperties.Logical;
import io.tidemark.spring.boot.autoconfigure.TidemarkProperties.TrackedObjectProperties;
import io.tidemark.sync.TrackedObject;
import io.tidemark.sync.internal.sql.PgName;
import io.tidemark.sync.spi.ChangeProvider;
import io.tidemark.sync.spi.WatermarkStore;

import javax.sql.DataSource;
import java.util.Collection;
import java.util.LinkedHashMap;
import java.util.Map;

/**
 * The log-based capture of {@code tidemark.provider=postgres-logical}: a {@link PostgresLogicalCapture} of the
 * objects' tables and its {@link PostgresLogicalProvider}. Loaded only for that provider, which the checks have
 * found on the class path; its methods speak core's types only, so the assembler never loads tidemark-postgres.
 */
final class LogicalCapture {

    private final Logical logical;
    private final PostgresLogicalCapture capture;

    /** @param objects the tracked objects, each with its table (checked before) */
    LogicalCapture(Logical logical, Collection<TrackedObjectProperties> objects) {
        this.logical = logical;
        // Several objects may read one table (each with its own watermark), perhaps spelt two ways ("items" and
        // "public.items"): the capture names each table once, as the first object spelt it.
        Map<PgName, String> tables = new LinkedHashMap<>();
        objects.forEach(object -> tables.putIfAbsent(
                PgName.parse(object.getTable(), "table").withDefaultSchema("public"), object.getTable()));
        this.capture = PostgresLogicalCapture.forTables(tables.values().toArray(String[]::new)).slot(logical.getSlot())
                .publication(logical.getPublication()).oldRows(logical.isOldRows()).build();
    }

    /** Creates what is missing on the server, when {@code tidemark.logical.install} asks for it. */
    void installIfAsked(DataSource dataSource) {
        if (logical.isInstall()) {
            capture.install(dataSource);
        }
    }

    /**
     * The provider over the engine's own store: the slot moves only past what every object stored there, so any
     * other store would let the server drop WAL an object has not delivered yet.
     */
    ChangeProvider provider(JdbcLogin login, WatermarkStore engineStore) {
        return PostgresLogicalProvider.builder(capture)
                .connect(login.url(), login.username(), login.password())
                .watermarks(engineStore)
                .acknowledgeEvery(logical.getAcknowledgeEvery())
                .statusInterval(logical.getStatusInterval())
                .readInterval(logical.getReadInterval())
                .maxBufferedChanges(logical.getMaxBufferedChanges())
                .maxBufferedBytes(logical.getMaxBufferedBytes().toBytes())
                .maxTransactionChanges(logical.getMaxTransactionChanges())
                .maxTransactionBytes(logical.getMaxTransactionBytes().toBytes())
                .slotLagWarning(logical.getSlotLagWarning().toBytes())
                .slotLagCheckInterval(logical.getSlotLagCheckInterval())
                .build();
    }

    TrackedObject track(String objectName, String table) {
        return capture.track(objectName, table);
    }
}
