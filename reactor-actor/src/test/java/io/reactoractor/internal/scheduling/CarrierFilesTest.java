package io.reactoractor.internal.scheduling;

import static org.junit.jupiter.api.Assertions.assertTrue;

import io.reactoractor.ActorScheduler;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.stream.Stream;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.Test;

/**
 * On Linux each carrier of a fair scheduler keeps its own {@code schedstat} file open ({@link StolenTime}); a
 * carrier that leaves closes it, so schedulers created and disposed in a loop leak no file descriptors.
 */
class CarrierFilesTest {

    @Test
    void disposedSchedulersLeaveNoOpenFile() throws Exception {
        Assumptions.assumeTrue(Files.isDirectory(Path.of("/proc/self/fd")), "Linux only");
        runAndDispose(5); // class loading, lazily opened JDK files
        long before = openFiles();
        runAndDispose(100);
        long after = openFiles();
        assertTrue(after - before < 40, "open files " + before + " -> " + after + " after 100 schedulers of 2 carriers");
    }

    private static void runAndDispose(int schedulers) throws InterruptedException {
        for (int i = 0; i < schedulers; i++) {
            ActorScheduler s = ActorScheduler.builder().name("files-" + i).threads(2).build();
            java.util.concurrent.CountDownLatch ran = new java.util.concurrent.CountDownLatch(2);
            s.schedule(ran::countDown);
            s.createWorker().schedule(ran::countDown);
            assertTrue(ran.await(30, java.util.concurrent.TimeUnit.SECONDS));
            s.disposeGracefully().block(Duration.ofSeconds(30));
        }
    }

    private static long openFiles() throws IOException {
        try (Stream<Path> fds = Files.list(Path.of("/proc/self/fd"))) {
            return fds.count();
        }
    }
}
