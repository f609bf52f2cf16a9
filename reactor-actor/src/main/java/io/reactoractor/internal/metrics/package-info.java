/**
 * What an {@code io.reactoractor.ActorMetrics} handle is inside: the reporting interfaces of the
 * scheduler, the pull consumer and the ring buffer. <b>Not API</b> (see {@link io.reactoractor.internal}).
 *
 * <p>Contract of every binding: registering and removing meters <b>never throws</b>. The callers are
 * constructors of actors (a throw would leave one half built), retirements and terminations (a group's
 * dispose, the last exiting carrier), which must complete whatever a meter registry does; a registry that
 * fails is the binding's to log. The Micrometer binding keeps it in one place,
 * {@code io.reactoractor.micrometer.MeterSet}.
 */
package io.reactoractor.internal.metrics;
