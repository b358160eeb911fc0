/** What an application implements to take part in the auto-configured engine: {@link SyncEngineCustomizer}. */
package io.tidemark.spring.boot.autoconfigure.spi;
