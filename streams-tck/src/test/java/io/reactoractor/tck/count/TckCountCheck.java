package io.reactoractor.tck.count;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.io.StringReader;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Properties;

import org.junit.jupiter.api.Test;

/**
 * Run by the {@code tck-count-check} surefire execution, after the TCK execution: fails the build when
 * the TCK execution of <em>this</em> build (same {@code tck.run.id}) ran fewer tests than expected, e.g.
 * because the TestNG engine was missing, a class was not discovered, or an include pattern broke.
 */
class TckCountCheck {

    @Test
    void theTckRanAtLeastTheExpectedNumberOfTests() throws IOException {
        String file = required("tck.count.file.check");
        Path p = Path.of(file);
        assertTrue(Files.isRegularFile(p), () -> "no TCK count file " + p.toAbsolutePath()
                + ": the TCK execution did not run or its listener was not registered");
        Properties counts = new Properties();
        counts.load(new StringReader(Files.readString(p)));

        assertEquals(required("tck.run.id"), counts.getProperty("runId"),
                "the count file is stale (written by another build): the TCK execution did not run in this build");
        int succeeded = Integer.parseInt(counts.getProperty("succeeded"));
        int failed = Integer.parseInt(counts.getProperty("failed"));
        int aborted = Integer.parseInt(counts.getProperty("aborted"));
        int skipped = Integer.parseInt(counts.getProperty("skipped"));
        int total = succeeded + failed + aborted + skipped;
        int minTotal = Integer.parseInt(required("tck.expected.min.tests"));
        int minSucceeded = Integer.parseInt(required("tck.expected.min.succeeded"));

        System.out.printf("TCK tests run: %d (succeeded %d, failed %d, not verified/aborted %d, skipped %d)%n",
                total, succeeded, failed, aborted, skipped);
        assertEquals(0, failed, "TCK failures");
        assertTrue(total >= minTotal, () -> "only " + total + " TCK tests ran, expected at least " + minTotal);
        assertTrue(succeeded >= minSucceeded,
                () -> "only " + succeeded + " TCK tests passed, expected at least " + minSucceeded);
    }

    private static String required(String property) {
        String v = System.getProperty(property);
        assertNotNull(v, "system property " + property + " not set (run through Maven)");
        return v;
    }
}
