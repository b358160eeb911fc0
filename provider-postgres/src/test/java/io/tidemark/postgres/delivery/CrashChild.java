package io.tidemark.postgres.delivery;

import io.tidemark.postgres.PostgresOutbox;
import io.tidemark.postgres.PostgresProvider;
import io.tidemark.sync.ChangeBatch;
import io.tidemark.sync.InitialSync;
import io.tidemark.sync.JdbcWatermarkStore;
import io.tidemark.sync.SyncEngine;
import io.tidemark.sync.TrackedObject;
import io.tidemark.sync.spi.Destination;
import io.tidemark.testing.PooledDataSource;
import org.postgresql.ds.PGSimpleDataSource;

import java.io.FileOutputStream;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;

/**
 * The process the crash test kills: an engine over the crash table's outbox with two destinations, each appending
 * one line per accepted page to its own file (one {@code write} per line, so a kill leaves at most a partial last
 * line, which is a page that was never accepted). Runs until killed.
 *
 * <p>Arguments: the JDBC URL, the run number, the folder of the destinations' files.
 */
public final class CrashChild {

    static final String TABLE = "public.crash_items";
    static final String OBJECT = "Items";
    static final int PAGE_SIZE = 100;
    static final int MAX_ROWS = 500;
    static final String[] DESTINATIONS = {"a", "b"};

    private CrashChild() {
    }

    /** Appends each accepted page as a line to {@code <folder>/<name>.log}. */
    static final class FileDestination implements Destination {
        private final FileOutputStream out;
        private final int run;

        FileDestination(Path folder, String name, int run) {
            this.run = run;
            try {
                this.out = new FileOutputStream(folder.resolve(name + ".log").toFile(), true);
            } catch (IOException e) {
                throw new UncheckedIOException(e);
            }
        }

        @Override
        public void deliver(ChangeBatch batch) throws IOException {
            out.write(AcceptedPage.of(run, batch, 0).toLine().getBytes(StandardCharsets.US_ASCII));
        }
    }

    static TrackedObject object() {
        return PostgresOutbox.forTable(TABLE).build().track(OBJECT).initialSync(InitialSync.INCREMENTAL).maxRows(MAX_ROWS).pageSize(PAGE_SIZE)
                .pollInterval(Duration.ofMillis(20));
    }

    static SyncEngine.Builder engine(javax.sql.DataSource dataSource, Path folder, int run) {
        SyncEngine.Builder builder = SyncEngine.builder()
                .name("crash-" + run)
                .provider(PostgresProvider.builder(dataSource).listen(false).build())
                .watermarks(JdbcWatermarkStore.create(dataSource))
                .track(object());
        for (String name : DESTINATIONS) {
            builder.destination(name, new FileDestination(folder, name, run));
        }
        return builder;
    }

    public static void main(String[] args) throws InterruptedException {
        PGSimpleDataSource target = new PGSimpleDataSource();
        target.setURL(args[0]);
        int run = Integer.parseInt(args[1]);
        Path folder = Path.of(args[2]);
        PooledDataSource pool = PooledDataSource.of(target, 4);
        SyncEngine engine = engine(pool, folder, run).build();
        engine.start();
        System.out.println("run " + run + " started");
        Thread.sleep(Long.MAX_VALUE);
    }
}
