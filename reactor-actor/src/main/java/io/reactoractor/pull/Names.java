package io.reactoractor.pull;

/** Validation of subject and group names (one rule for the API and the HTTP app), and of offsets given to a store. */
final class Names {

    /** Longest subject name. */
    static final int MAX_SUBJECT = 128;
    /** Longest group name: leaves room for the {@code dlq.} prefix and the scheduling group prefix. */
    static final int MAX_GROUP = 120;

    private Names() {
    }

    /**
     * The offsets of a store call ({@link AsyncMessageStore}'s "Arguments"), checked in the call.
     *
     * @param offsets the offsets
     * @return {@code offsets}
     * @throws NullPointerException     if {@code offsets} is {@code null}
     * @throws IllegalArgumentException naming the first negative one
     */
    static long[] offsets(long[] offsets) {
        java.util.Objects.requireNonNull(offsets, "offsets");
        for (int i = 0; i < offsets.length; i++) {
            if (offsets[i] < 0) {
                throw new IllegalArgumentException("offsets[" + i + "] must be >= 0 but was " + offsets[i]);
            }
        }
        return offsets;
    }

    static String subject(String subject) {
        return check("subject", subject, MAX_SUBJECT);
    }

    static String group(String group) {
        return check("group", group, MAX_GROUP);
    }

    /** Letters, digits, {@code '.'}, {@code '_'} and {@code '-'}: safe in URLs, metric tags and file names. */
    private static String check(String what, String name, int max) {
        if (name == null) {
            throw new IllegalArgumentException(what + " must not be null");
        }
        if (name.isEmpty() || name.length() > max) {
            throw new IllegalArgumentException(what + " must have 1 to " + max + " characters but has "
                    + name.length());
        }
        for (int i = 0; i < name.length(); i++) {
            char c = name.charAt(i);
            boolean ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9')
                    || c == '.' || c == '_' || c == '-';
            if (!ok) {
                // the name comes from a client: echoed with everything but printable ASCII escaped, so a
                // rejected name cannot forge a log line (a raw line break) wherever the error is logged
                throw new IllegalArgumentException(what + " '" + io.reactoractor.internal.Internals.escaped(name)
                        + "' contains an illegal character " + (c >= 0x20 && c < 0x7f ? "'" + c + "'"
                        : String.format(java.util.Locale.ROOT, "U+%04X", (int) c))
                        + " at index " + i + " (allowed: letters, digits, '.', '_', '-')");
            }
        }
        return name;
    }
}
