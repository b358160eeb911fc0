package io.tidemark.cli;

import org.junit.jupiter.api.Test;
import picocli.CommandLine;

import java.io.PrintWriter;
import java.io.StringWriter;
import java.util.ArrayList;
import java.util.List;

import static org.assertj.core.api.Assertions.assertThat;

/** Every command and subcommand answers --help with its usage and exit code 0 (the jar itself: UsageIT). */
class EveryCommandHasHelpTest {

    @Test
    void every_subcommand_prints_its_help() {
        List<String> paths = new ArrayList<>();
        collect(TidemarkCli.commandLine(), new ArrayList<>(), paths);
        assertThat(paths).contains("outbox script", "outbox install", "outbox verify", "outbox uninstall",
                "logical script", "logical install", "logical status", "logical uninstall",
                "history script", "history install", "history verify", "history evolve", "history uninstall",
                "history prune", "sqlserver setup", "sqlserver procedure", "sqlserver role", "verify-contract",
                "status", "pause", "resume", "reset");

        for (String path : paths) {
            CommandLine cli = TidemarkCli.commandLine();
            StringWriter out = new StringWriter();
            cli.setOut(new PrintWriter(out));
            List<String> args = new ArrayList<>(List.of(path.split(" ")));
            args.add("--help");

            int exit = cli.execute(args.toArray(String[]::new));

            assertThat(exit).as(path).isZero();
            assertThat(out.toString()).as(path).startsWith("Usage: tidemark " + path);
        }
    }

    @Test
    void the_exit_codes_are_listed_in_the_top_level_help() {
        String help = TidemarkCli.commandLine().getUsageMessage();

        assertThat(help).contains("Exit codes:", "0   done", "1   a finding", "2   usage", "3   cannot connect",
                "4   the database refused the operation");
    }

    private static void collect(CommandLine command, List<String> prefix, List<String> paths) {
        command.getSubcommands().forEach((name, sub) -> {
            if (name.equals("help")) {
                return;
            }
            List<String> path = new ArrayList<>(prefix);
            path.add(name);
            paths.add(String.join(" ", path));
            collect(sub, path, paths);
        });
    }
}
