package io.reactoractor;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.File;
import java.io.IOException;
import java.lang.reflect.Method;
import java.lang.reflect.Modifier;
import java.net.URISyntaxException;
import java.net.URL;
import java.net.URLClassLoader;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;

import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * Micrometer is optional: every class an application, Mockito, Spring or Kotlin reflection may
 * introspect must load and reflect without it. Only {@code io.reactoractor.micrometer} (used only by
 * applications that have Micrometer) and {@code io.reactoractor.blockhound} (loaded only by BlockHound)
 * may mention optional dependencies in their signatures; in method bodies, besides those, only
 * {@code ContextThreadLocals$Snapshots} names Micrometer's context-propagation library (a private class
 * loaded once Reactor's automatic context propagation is on, which needs that library). The isolated
 * class path below has neither Micrometer jar.
 */
class WithoutMicrometerTest {

    private static final String MICROMETER_PACKAGE = "io.reactoractor.micrometer.";
    private static final String BLOCKHOUND_PACKAGE = "io.reactoractor.blockhound.";
    /** The only class outside the binding that names a Micrometer library (see ContextThreadLocals). */
    private static final String CONTEXT_PROPAGATION_USER = "io.reactoractor.internal.ContextThreadLocals$Snapshots";

    private URLClassLoader loader;

    @BeforeEach
    void isolate() throws IOException {
        loader = new URLClassLoader(classPathWithoutMicrometer(), ClassLoader.getPlatformClassLoader());
    }

    @AfterEach
    void close() throws IOException {
        loader.close();
    }

    @Test
    void theIsolatedLoaderReallyHasNoMicrometer() {
        // guards the two tests below against passing vacuously (e.g. if surefire changed the class path)
        assertThrows(ClassNotFoundException.class,
                () -> Class.forName("io.micrometer.core.instrument.MeterRegistry", false, loader));
    }

    @Test
    void everyPublicClassReflectsWithoutMicrometer() throws Exception {
        List<String> checked = new ArrayList<>();
        List<String> failures = new ArrayList<>();
        for (String name : libraryClassNames()) {
            if (name.startsWith(MICROMETER_PACKAGE) || name.startsWith(BLOCKHOUND_PACKAGE)) {
                continue;
            }
            Class<?> c;
            try {
                c = Class.forName(name, false, loader);
            } catch (LinkageError e) {
                failures.add(name + ": " + e);
                continue;
            }
            if (!isPublic(c)) {
                continue;
            }
            try {
                c.getMethods();
                c.getDeclaredMethods();
                c.getDeclaredFields();
                c.getDeclaredConstructors();
                c.getGenericInterfaces();
                c.getGenericSuperclass();
                checked.add(name);
            } catch (LinkageError | TypeNotPresentException e) {
                failures.add(name + ": " + e);
            }
        }
        assertEquals(List.of(), failures, "classes that need Micrometer to be introspected");
        // a loader that found nothing would pass the loop above: name the classes that matter
        assertTrue(checked.contains("io.reactoractor.ActorScheduler$Builder"), checked::toString);
        assertTrue(checked.contains("io.reactoractor.ActorScheduler"), checked::toString);
        assertTrue(checked.contains("io.reactoractor.pull.PullConsumer"), checked::toString);
        assertTrue(checked.size() > 30, () -> "only " + checked.size() + " classes checked: " + checked);
    }

    @Test
    void onlyTheBindingReferencesMicrometerAndNothingReferencesTheBinding() throws Exception {
        // class files name every class they use in their constant pool (as io/micrometer/...): a
        // reference in a method body, invisible to reflection, would still fail once it runs, and a
        // reference to the binding from pull or the scheduler would be a package cycle
        Path classes = classDirectory();
        List<String> offenders = new ArrayList<>();
        for (String name : libraryClassNames()) {
            if (name.startsWith(MICROMETER_PACKAGE)) {
                continue;
            }
            byte[] bytes = Files.readAllBytes(classes.resolve(name.replace('.', File.separatorChar) + ".class"));
            String constants = new String(bytes, StandardCharsets.ISO_8859_1);
            if (name.equals(CONTEXT_PROPAGATION_USER)) {
                // Micrometer's context-propagation library only (not its core), in the one class loaded
                // once Reactor's automatic context propagation is on, which Reactor allows only with it
                if (constants.replace("io/micrometer/context/", "").contains("io/micrometer/")
                        || constants.contains("io/reactoractor/micrometer/")) {
                    offenders.add(name);
                }
                continue;
            }
            if (constants.contains("io/micrometer/") || constants.contains("io/reactoractor/micrometer/")) {
                offenders.add(name);
            }
        }
        assertEquals(List.of(), offenders);
    }

    @Test
    void aSchedulerAndAPullConsumerRunWithoutMicrometer() throws Exception {
        Class<?> schedulerClass = loader.loadClass("io.reactoractor.ActorScheduler");
        assertFalse(schedulerClass == ActorScheduler.class, "the class must come from the isolated loader");
        Object builder = schedulerClass.getMethod("builder").invoke(null);
        Class<?> builderClass = builder.getClass();
        builderClass.getMethod("name", String.class).invoke(builder, "no-micrometer");
        builderClass.getMethod("threads", int.class).invoke(builder, 1);
        Object scheduler = builderClass.getMethod("build").invoke(builder);
        try {
            CountDownLatch ran = new CountDownLatch(1);
            schedulerClass.getMethod("schedule", Runnable.class).invoke(scheduler, (Runnable) ran::countDown);
            assertTrue(ran.await(5, TimeUnit.SECONDS), "the scheduled task ran");

            Class<?> consumerClass = loader.loadClass("io.reactoractor.pull.PullConsumer");
            Object consumerBuilder = consumerClass.getMethod("builder", schedulerClass).invoke(null, scheduler);
            Object consumer = consumerBuilder.getClass().getMethod("build").invoke(consumerBuilder);
            consumerClass.getMethod("append", String.class, byte[].class).invoke(consumer, "s", new byte[] {1});
            Object mono = consumerClass.getMethod("pull", String.class, String.class, int.class, Duration.class)
                    .invoke(consumer, "s", "g", 1, Duration.ofSeconds(1));
            Method block = mono.getClass().getMethod("block", Duration.class);
            block.setAccessible(true); // Mono's concrete class is package-private
            Object result = block.invoke(mono, Duration.ofSeconds(5));
            List<?> messages = (List<?>) result.getClass().getMethod("messages").invoke(result);
            assertEquals(1, messages.size(), "the pull delivered the appended message: " + result);
            consumerClass.getMethod("dispose").invoke(consumer);
        } finally {
            schedulerClass.getMethod("dispose").invoke(scheduler);
        }
        assertTrue((Boolean) schedulerClass.getMethod("isDisposed").invoke(scheduler));
    }

    /** A nested class is only reachable if it and every class enclosing it are public. */
    private static boolean isPublic(Class<?> c) {
        for (Class<?> k = c; k != null; k = k.getEnclosingClass()) {
            if (!Modifier.isPublic(k.getModifiers())) {
                return false;
            }
        }
        return true;
    }

    private static URL[] classPathWithoutMicrometer() throws IOException {
        List<URL> urls = new ArrayList<>();
        for (String entry : System.getProperty("java.class.path").split(File.pathSeparator)) {
            if (!entry.isEmpty() && !entry.toLowerCase(java.util.Locale.ROOT).contains("micrometer")) {
                urls.add(Path.of(entry).toUri().toURL());
            }
        }
        return urls.toArray(URL[]::new);
    }

    private static Path classDirectory() throws URISyntaxException {
        Path classes = Path.of(ActorScheduler.class.getProtectionDomain().getCodeSource().getLocation().toURI());
        assertTrue(Files.isDirectory(classes), "expected the library's class directory but got " + classes);
        return classes;
    }

    /** The binary names of the classes compiled from the library's sources (its jar's content). */
    private static List<String> libraryClassNames() throws IOException, URISyntaxException {
        Path classes = classDirectory();
        try (Stream<Path> files = Files.walk(classes)) {
            return files.filter(p -> p.toString().endsWith(".class"))
                    .map(p -> classes.relativize(p).toString())
                    .map(s -> s.substring(0, s.length() - ".class".length()).replace(File.separatorChar, '.'))
                    .filter(s -> !s.endsWith("package-info") && !s.endsWith("module-info"))
                    .sorted()
                    .toList();
        }
    }
}
