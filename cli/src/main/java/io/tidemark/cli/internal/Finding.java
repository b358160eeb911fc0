package io.tidemark.cli.internal;

/** A check found something (already printed): exit code 1, with this one-line summary on stderr. */
final class Finding extends RuntimeException {

    Finding(String summary) {
        super(summary);
    }
}
