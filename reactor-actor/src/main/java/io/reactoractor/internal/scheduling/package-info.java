/**
 * The scheduler engine: carriers and their run loop, the fair and FIFO run queues, the run-next slot,
 * turns, timers and the hog monitor. <b>Not API</b> (see {@link io.reactoractor.internal}).
 */
package io.reactoractor.internal.scheduling;
