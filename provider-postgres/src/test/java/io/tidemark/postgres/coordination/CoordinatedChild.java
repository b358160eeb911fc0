package io.tidemark.postgres.coordination;

import io.tidemark.sync.SyncEngine;
import org.postgresql.ds.PGSimpleDataSource;

import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.time.Duration;

/**
 * One engine instance in a child JVM for {@link ChildJvmFailoverTest}: {@code <jdbcUrl> <instanceId> <leaseMillis>
 * <objects>}. Prints {@code started} once running; closes the engine cleanly when its standard input ends, unless
 * it is killed first.
 */
public final class CoordinatedChild {

    private CoordinatedChild() {
    }

    public static void main(String[] args) throws Exception {
        PGSimpleDataSource ds = new PGSimpleDataSource();
        ds.setURL(args[0]);
        SyncEngine engine = StreamFixture.engine(ds, Integer.parseInt(args[3]), args[1],
                Duration.ofMillis(Long.parseLong(args[2])));
        engine.start();
        System.out.println("started");
        System.out.flush();
        try (BufferedReader in = new BufferedReader(new InputStreamReader(System.in, StandardCharsets.UTF_8))) {
            while (in.readLine() != null) {
                // waits for the parent to close the pipe
            }
        }
        engine.close();
    }
}
