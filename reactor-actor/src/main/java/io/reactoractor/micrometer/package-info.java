/**
 * The Micrometer binding: {@link io.reactoractor.micrometer.MicrometerActorMetrics}. The only package of
 * the library whose classes need Micrometer on the class path; every other class loads and reflects
 * without it.
 */
package io.reactoractor.micrometer;
