package io.tidemark.cli.internal;

import io.tidemark.sync.CheckReport;
import io.tidemark.sync.JdbcWatermarkStore;
import io.tidemark.sync.TidemarkException;
import io.tidemark.sync.spi.DestinationPosition;
import io.tidemark.sync.spi.WatermarkState;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Option;
import picocli.CommandLine.ParameterException;
import picocli.CommandLine.Parameters;

import java.time.Clock;
import java.time.Instant;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.Callable;

/**
 * {@code status}, {@code pause}, {@code resume}, {@code reset}: the watermark store ({@link JdbcWatermarkStore})
 * read and steered without the application. A running engine reads the paused flags at every cycle, so pause and
 * resume take effect at its next poll.
 */
public final class StoreCommands {

    private StoreCommands() {
    }

    /** Where the store is, and the objects it has. */
    abstract static class StoreCommand implements Callable<Integer> {
        @Mixin ConnectionOptions connection;

        @Option(names = "--store-schema", paramLabel = "SCHEMA", defaultValue = "tidemark",
                description = "The store's schema; default ${DEFAULT-VALUE}.")
        String schema;

        @Option(names = "--store-table", paramLabel = "TABLE", defaultValue = "sync_state",
                description = "The watermark table; default ${DEFAULT-VALUE}.")
        String table;

        /** The store; never creates its tables (an operator's tool must not create what the application owns). */
        JdbcWatermarkStore store() {
            JdbcWatermarkStore store = JdbcWatermarkStore.builder(connection.connect()).schema(schema).table(table)
                    .createTables(false).build();
            List<CheckReport.Problem> problems = store.check();
            if (!problems.isEmpty()) {
                CheckReport.Problem first = problems.get(0);
                throw new TidemarkException(first.code(), first.subject() + ": " + first.message());
            }
            return store;
        }

        /** The stored state of {@code object}; a usage error listing the stored objects when there is none. */
        WatermarkState known(JdbcWatermarkStore store, String object) {
            Optional<WatermarkState> state = store.load(object);
            if (state.isEmpty()) {
                throw new ParameterException(connection.command.commandLine(), "no object '" + object + "' in "
                        + schema + "." + table + "; the objects there are " + store.loadAll().keySet());
            }
            return state.get();
        }

        static Instant now() {
            return Clock.systemUTC().instant();
        }
    }

    @Command(name = "status", mixinStandardHelpOptions = true,
            description = "Shows each object's stored state: version, paused, last move, last poll, last error, positions.")
    public static final class Status extends StoreCommand {
        @Parameters(paramLabel = "OBJECT", arity = "0..*", description = "Objects to show; default all.")
        List<String> objects = List.of();

        @Override
        public Integer call() {
            JdbcWatermarkStore store = store();
            Map<String, WatermarkState> all = store.loadAll();
            if (objects.isEmpty() && all.isEmpty()) {
                Output.println("no objects in " + schema + "." + table);
            }
            for (String name : objects.isEmpty() ? List.copyOf(all.keySet()) : objects) {
                print(known(store, name));
            }
            return 0;
        }

        private static void print(WatermarkState s) {
            Output.println(s.objectName() + (s.paused() ? "  PAUSED" : ""));
            Output.println("  version:     " + (s.version().isPresent() ? Long.toString(s.version().getAsLong())
                    : "none (the next cycle is a first cycle)"));
            Output.println("  last moved:  " + s.lastMovedAt().map(Instant::toString).orElse("never"));
            Output.println("  last polled: " + s.lastPolledAt().map(Instant::toString).orElse("never"));
            s.lastError().ifPresent(e -> Output.println("  last error:  " + e));
            s.source().ifPresent(src -> Output.println("  source:      " + src));
            for (DestinationPosition p : s.positions().values()) {
                Output.println("  destination " + p.destination() + ": " + (p.position().isPresent()
                        ? "at " + p.position().getAsLong() : "at the object's watermark")
                        + (p.paused() ? "  PAUSED" : ""));
            }
        }
    }

    /** Pause or resume: the same command but for the flag it sets. */
    abstract static class Steer extends StoreCommand {
        @Parameters(index = "0", paramLabel = "OBJECT") String object;

        @Option(names = "--destination", paramLabel = "NAME", description = "Only this destination of the object.")
        String destination;

        private final boolean pause;

        Steer(boolean pause) {
            this.pause = pause;
        }

        @Override
        public Integer call() {
            JdbcWatermarkStore store = store();
            known(store, object);
            String done = pause ? "paused" : "resumed";
            if (destination == null) {
                store.setPaused(object, pause, now());
                Output.println(object + " " + done);
            } else {
                store.setDestinationPaused(object, destination, pause, now());
                Output.println(object + ": destination " + destination + " " + done);
            }
            return 0;
        }
    }

    @Command(name = "pause", mixinStandardHelpOptions = true,
            description = "Pauses an object, or one destination of it; a running engine stops at its next cycle.")
    public static final class Pause extends Steer {
        public Pause() {
            super(true);
        }
    }

    @Command(name = "resume", mixinStandardHelpOptions = true,
            description = "Resumes an object, or one destination of it; a running engine picks it up at its next poll.")
    public static final class Resume extends Steer {
        public Resume() {
            super(false);
        }
    }

    @Command(name = "reset", mixinStandardHelpOptions = true, description = {
            "Forgets an object's watermark and positions: its next cycle is a first cycle.",
            "That is a seed, or a full export for an InitialSync.FULL object. Refused unless the object is paused, so",
            "no cycle of a running engine is in flight; resume it afterwards. --force skips that check."})
    public static final class Reset extends StoreCommand {
        @Parameters(index = "0", paramLabel = "OBJECT") String object;

        @Option(names = "--force", description = "Reset even though the object is not paused.")
        boolean force;

        @Override
        public Integer call() {
            JdbcWatermarkStore store = store();
            WatermarkState state = known(store, object);
            if (!state.paused() && !force) {
                throw new Finding(object + " is not paused: pause it first (tidemark pause " + object
                        + "), so that no cycle is in flight while its watermark is reset; or use --force");
            }
            store.reset(object, now());
            Output.println(object + " reset: its next cycle is a first cycle"
                    + (state.paused() ? "; it is still paused (tidemark resume " + object + ")" : ""));
            return 0;
        }
    }
}
