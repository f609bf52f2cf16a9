package io.reactoractor.pull;

/** Validation of subject and group names (one rule for the API and the HTTP app). */
final class Names {

    /** Longest subject name. */
    static final int MAX_SUBJECT = 128;
    /** Longest group name: leaves room for the {@code dlq.} prefix and the scheduling group prefix. */
    static final int MAX_GROUP = 120;

    private Names() {
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
                throw new IllegalArgumentException(what + " '" + name + "' contains an illegal character '"
                        + c + "' at index " + i + " (allowed: letters, digits, '.', '_', '-')");
            }
        }
        return name;
    }
}
