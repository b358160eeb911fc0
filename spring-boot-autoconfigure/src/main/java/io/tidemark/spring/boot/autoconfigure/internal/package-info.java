/** Not API: how the auto-configuration turns the properties into an engine. */
package io.tidemark.spring.boot.autoconfigure.internal;
