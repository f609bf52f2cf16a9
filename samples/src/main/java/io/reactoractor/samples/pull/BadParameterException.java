package io.reactoractor.samples.pull;

/**
 * A request parameter (path variable, query parameter or body field) was invalid: answered with HTTP
 * 400 and a JSON body naming the parameter (see {@link ApiErrors}).
 */
public final class BadParameterException extends RuntimeException {

    private static final long serialVersionUID = 1L;

    private final String parameter;

    /**
     * @param parameter the parameter's name as the client wrote it ({@code max}, {@code timeoutMs}, ...)
     * @param message   what is wrong, starting with the parameter's name
     */
    public BadParameterException(String parameter, String message) {
        super(message, null, false, false); // expected input errors: no stack trace to fill
        this.parameter = parameter;
    }

    /** @return the parameter's name */
    public String parameter() {
        return parameter;
    }
}
