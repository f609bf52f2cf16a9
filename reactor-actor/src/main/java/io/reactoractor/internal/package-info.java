/**
 * The engine behind the public API. <b>Not API:</b> every type under {@code io.reactoractor.internal}
 * may change or disappear in any release. Types here are public only where another package of the
 * library needs them (Java has no friend packages); applications use {@code io.reactoractor},
 * {@code io.reactoractor.actor}, {@code io.reactoractor.pull} and the optional bindings.
 */
package io.reactoractor.internal;
