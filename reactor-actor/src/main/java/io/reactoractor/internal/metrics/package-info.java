/**
 * What an {@code io.reactoractor.ActorMetrics} handle is inside: the reporting interfaces of the
 * scheduler and of the pull consumer. <b>Not API</b> (see {@link io.reactoractor.internal}).
 */
package io.reactoractor.internal.metrics;
