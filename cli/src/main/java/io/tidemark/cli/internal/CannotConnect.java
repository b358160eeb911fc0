package io.tidemark.cli.internal;

/** The database at {@code --url} could not be reached or refused the login: exit code 3. */
final class CannotConnect extends RuntimeException {

    CannotConnect(String message, Throwable cause) {
        super(message, cause);
    }
}
