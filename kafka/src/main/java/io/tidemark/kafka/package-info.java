/**
 * A Kafka destination for the engine ({@link io.tidemark.kafka.KafkaDestination}): one record per change, keyed by
 * the row's key columns, the page's envelope in headers, an idempotent and optionally transactional producer
 * (kafka/README.md). Its {@code internal} package is not API.
 */
package io.tidemark.kafka;
