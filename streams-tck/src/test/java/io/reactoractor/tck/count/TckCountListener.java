package io.reactoractor.tck.count;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.concurrent.atomic.AtomicInteger;

import org.junit.platform.engine.TestExecutionResult;
import org.junit.platform.launcher.TestExecutionListener;
import org.junit.platform.launcher.TestIdentifier;
import org.junit.platform.launcher.TestPlan;

/**
 * Counts the tests the JUnit Platform ran (TCK methods through the TestNG engine) and writes the counts
 * to the file named by the system property {@code tck.count.file}, tagged with {@code tck.run.id}.
 * Registered through {@code META-INF/services}; inactive when {@code tck.count.file} is not set (the
 * checking execution does not set it). {@link TckCountCheck}, run by a later surefire execution, fails
 * the build when the counts are below the expected minimum. See the module README.
 */
public final class TckCountListener implements TestExecutionListener {

    private final AtomicInteger succeeded = new AtomicInteger();
    private final AtomicInteger failed = new AtomicInteger();
    private final AtomicInteger aborted = new AtomicInteger();
    private final AtomicInteger skipped = new AtomicInteger();

    @Override
    public void testPlanExecutionStarted(TestPlan testPlan) {
        succeeded.set(0);
        failed.set(0);
        aborted.set(0);
        skipped.set(0);
    }

    @Override
    public void executionSkipped(TestIdentifier id, String reason) {
        if (id.isTest()) {
            skipped.incrementAndGet();
        }
    }

    @Override
    public void executionFinished(TestIdentifier id, TestExecutionResult result) {
        if (!id.isTest()) {
            return;
        }
        switch (result.getStatus()) {
            case SUCCESSFUL -> succeeded.incrementAndGet();
            case FAILED -> failed.incrementAndGet();
            case ABORTED -> aborted.incrementAndGet();
        }
    }

    @Override
    public void testPlanExecutionFinished(TestPlan testPlan) {
        String file = System.getProperty("tck.count.file");
        if (file == null || file.isBlank()) {
            return;
        }
        String content = "runId=" + System.getProperty("tck.run.id", "") + "\n"
                + "succeeded=" + succeeded.get() + "\n"
                + "failed=" + failed.get() + "\n"
                + "aborted=" + aborted.get() + "\n"
                + "skipped=" + skipped.get() + "\n";
        try {
            Path p = Path.of(file);
            Files.createDirectories(p.toAbsolutePath().getParent());
            Files.writeString(p, content, StandardCharsets.UTF_8);
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }
}
