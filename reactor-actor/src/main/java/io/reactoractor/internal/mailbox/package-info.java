/**
 * The actors' mailbox queue. <b>Not API</b> (see {@link io.reactoractor.internal}).
 */
package io.reactoractor.internal.mailbox;
