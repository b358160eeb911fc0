/**
 * Tidemark's Spring Boot auto-configuration: {@link io.tidemark.spring.boot.autoconfigure.TidemarkProperties}
 * ({@code tidemark.*}), the engine and its lifecycle, the Actuator health indicator, the change context of web
 * requests. See spring-boot-autoconfigure/README.md.
 */
package io.tidemark.spring.boot.autoconfigure;
