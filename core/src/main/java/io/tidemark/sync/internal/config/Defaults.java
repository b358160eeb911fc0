package io.tidemark.sync.internal.config;

import java.time.Duration;

/** The defaults more than one builder uses, defined once. */
public final class Defaults {

    /** How long one database call may run before it is cancelled (providers, verifier); as in docs/contract.md. */
    public static final Duration COMMAND_TIMEOUT = Duration.ofSeconds(300);
    /** The engine's default interval between background polls of an object. */
    public static final Duration POLL_INTERVAL = Duration.ofSeconds(30);
    /** The engine's default largest number of changes per batch handed to a destination. */
    public static final int PAGE_SIZE = 1000;
    /** How long closing an engine lets running cycles finish before cancelling them. */
    public static final Duration SHUTDOWN_TIMEOUT = Duration.ofSeconds(30);
    /** The most poller threads an engine starts unless told otherwise. */
    public static final int MAX_THREADS = 4;

    /** Health: failed or blocked cycles in a row after which an object degrades the engine. */
    public static final int HEALTH_FAILING_CYCLES = 3;
    /** Health: how long an object may fail before it degrades the engine, however few its attempts. */
    public static final Duration HEALTH_FAILING_FOR = Duration.ofMinutes(5);
    /** Health: dead letters for one destination of one object, within the window, that degrade the engine. */
    public static final int HEALTH_DEAD_LETTERS = 10;
    /** Health: the window in which dead letters are counted. */
    public static final Duration HEALTH_DEAD_LETTER_WINDOW = Duration.ofHours(1);
    /**
     * How long an engine instance holds an object's lease without renewing it: a dead instance's objects are taken
     * over within this plus one renewal interval (a third of it), 20 s in all.
     */
    public static final Duration LEASE_DURATION = Duration.ofSeconds(15);

    private Defaults() {
    }

    /** The longest wait between two attempts of one page at one destination, unless its policy says otherwise. */
    public static final java.time.Duration MAX_DELIVERY_DELAY = java.time.Duration.ofSeconds(30);
}
