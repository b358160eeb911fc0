package io.tidemark.sync.spi;

/**
 * Lets the engine cancel a provider's call in flight, so that closing the engine never waits for a long
 * procedure (or leaves a thread behind). A provider registers how to cancel what it is running, typically
 * {@code statement::cancel}, for as long as it runs.
 */
public interface CallContext {

    /**
     * Registers the action that cancels the running call. Close the returned registration when the call is
     * over. If the context is already cancelled, the action runs at once.
     */
    Registration onCancel(Runnable cancelAction);

    /** Whether the engine has asked for the call to stop. */
    boolean isCancelled();

    /** A context that is never cancelled, for calls made outside an engine. */
    static CallContext none() {
        return NoCancellation.INSTANCE;
    }

    /** A registration of a cancel action; closing it forgets the action. */
    interface Registration extends AutoCloseable {
        @Override
        void close();
    }

    /** The context of {@link #none()}. */
    enum NoCancellation implements CallContext {
        INSTANCE;

        @Override
        public Registration onCancel(Runnable cancelAction) {
            return () -> { };
        }

        @Override
        public boolean isCancelled() {
            return false;
        }
    }
}
