package io.tidemark.cli;

import picocli.CommandLine;

/** {@code --version}: the version in the jar's manifest, written there by the build. */
final class Version implements CommandLine.IVersionProvider {

    @Override
    public String[] getVersion() {
        String version = TidemarkCli.class.getPackage().getImplementationVersion();
        return new String[] {"tidemark " + (version == null ? "(development build)" : version)
                + ", Java " + System.getProperty("java.version")};
    }
}
