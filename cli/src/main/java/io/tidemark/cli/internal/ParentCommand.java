package io.tidemark.cli.internal;

import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.ParameterException;
import picocli.CommandLine.Spec;

/** A command that only groups subcommands: run without one, it is a usage error naming the choices. */
public abstract class ParentCommand implements Runnable {

    @Spec
    CommandSpec spec;

    @Override
    public void run() {
        throw new ParameterException(spec.commandLine(), "Missing subcommand: choose one of "
                + String.join(", ", spec.subcommands().keySet()) + " (or --help)");
    }
}
