package io.tidemark.sync.testkit;

import org.slf4j.MDC;
import org.slf4j.helpers.BasicMDCAdapter;
import org.slf4j.spi.MDCAdapter;

import java.lang.reflect.Field;

/**
 * slf4j-simple, the tests' logging backend, keeps no MDC (its adapter drops every key). A test of what the engine
 * puts in the MDC installs SLF4J's own {@link BasicMDCAdapter}, the thread-local map that backends such as Logback
 * implement the same way. Tests run on the class path, where SLF4J's package-private adapter field is reachable.
 */
public final class WorkingMdc {

    private WorkingMdc() {
    }

    public static synchronized void install() {
        if (MDC.getMDCAdapter() instanceof BasicMDCAdapter) {
            return;
        }
        try {
            Field field = MDC.class.getDeclaredField("MDC_ADAPTER");
            field.setAccessible(true);
            field.set(null, (MDCAdapter) new BasicMDCAdapter());
        } catch (ReflectiveOperationException e) {
            throw new IllegalStateException("cannot install an MDC adapter for the test", e);
        }
    }
}
