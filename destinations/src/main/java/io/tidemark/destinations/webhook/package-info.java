/** The HTTP webhook destination: the page's envelope POSTed as JSON, signed the Standard Webhooks way. */
package io.tidemark.destinations.webhook;
