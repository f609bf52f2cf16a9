/**
 * What an {@code io.reactoractor.ActorMetrics} handle is inside: the reporting interfaces of the
 * scheduler, the pull consumer and the ring buffer. <b>Not API</b> (see {@link io.reactoractor.internal}).
 */
package io.reactoractor.internal.metrics;
