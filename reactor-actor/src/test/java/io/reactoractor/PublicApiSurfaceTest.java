package io.reactoractor;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.lang.reflect.Constructor;
import java.lang.reflect.Executable;
import java.lang.reflect.Field;
import java.lang.reflect.GenericArrayType;
import java.lang.reflect.Method;
import java.lang.reflect.Modifier;
import java.lang.reflect.ParameterizedType;
import java.lang.reflect.Type;
import java.lang.reflect.TypeVariable;
import java.lang.reflect.WildcardType;
import java.net.URISyntaxException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.TreeSet;
import java.util.stream.Stream;

import org.junit.jupiter.api.Test;

/**
 * The public API names no engine type: no public or protected member of a public type outside
 * {@code io.reactoractor.internal} mentions a type inside it (in a signature, a type argument, a bound,
 * a supertype or a thrown type), so the engine can change without breaking applications.
 */
class PublicApiSurfaceTest {

    private static final String INTERNAL = "io.reactoractor.internal.";

    @Test
    void noApiSignatureMentionsAnInternalType() throws Exception {
        List<Class<?>> api = apiTypes();
        assertTrue(api.size() >= 20, "scanned the library's classes: " + api);
        TreeSet<String> leaks = new TreeSet<>();
        for (Class<?> c : api) {
            check(c.getName() + " extends", c.getGenericSuperclass(), leaks);
            for (Type i : c.getGenericInterfaces()) {
                check(c.getName() + " implements", i, leaks);
            }
            for (Field f : c.getDeclaredFields()) {
                if (visible(f.getModifiers())) {
                    check(c.getName() + "." + f.getName(), f.getGenericType(), leaks);
                }
            }
            for (Method m : c.getDeclaredMethods()) {
                if (visible(m.getModifiers()) && !m.isSynthetic()) {
                    check(c.getName() + "." + m.getName() + "()", m.getGenericReturnType(), leaks);
                    executable(c.getName() + "." + m.getName() + "()", m, leaks);
                }
            }
            for (Constructor<?> k : c.getDeclaredConstructors()) {
                if (visible(k.getModifiers()) && !k.isSynthetic()) {
                    executable(c.getName() + ".<init>", k, leaks);
                }
            }
        }
        assertEquals(new TreeSet<>(), leaks, "public API members that mention internal types");
    }

    @Test
    void anActorMetricsThatNoBindingCreatedIsRefusedByName() {
        ActorMetrics own = new ActorMetrics() {
        };
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
                () -> ActorScheduler.builder().metrics(own));
        assertTrue(e.getMessage().startsWith("metrics"), e.getMessage());
    }

    private static void executable(String where, Executable e, TreeSet<String> leaks) {
        for (Type p : e.getGenericParameterTypes()) {
            check(where + " parameter", p, leaks);
        }
        for (Type t : e.getGenericExceptionTypes()) {
            check(where + " throws", t, leaks);
        }
        for (TypeVariable<?> v : e.getTypeParameters()) {
            for (Type b : v.getBounds()) {
                check(where + " bound", b, leaks);
            }
        }
    }

    private static boolean visible(int modifiers) {
        return Modifier.isPublic(modifiers) || Modifier.isProtected(modifiers);
    }

    private static void check(String where, Type t, TreeSet<String> leaks) {
        if (t == null) {
            return;
        }
        if (t instanceof Class<?> c) {
            while (c.isArray()) {
                c = c.getComponentType();
            }
            if (c.getName().startsWith(INTERNAL)) {
                leaks.add(where + " -> " + c.getName());
            }
        } else if (t instanceof ParameterizedType p) {
            check(where, p.getRawType(), leaks);
            for (Type a : p.getActualTypeArguments()) {
                check(where, a, leaks);
            }
        } else if (t instanceof GenericArrayType g) {
            check(where, g.getGenericComponentType(), leaks);
        } else if (t instanceof WildcardType w) {
            Stream.concat(Stream.of(w.getUpperBounds()), Stream.of(w.getLowerBounds()))
                    .forEach(b -> check(where, b, leaks));
        }
    }

    /** Public types (top-level and nested) of the library's classes directory, outside the internal packages. */
    private static List<Class<?>> apiTypes() throws IOException, URISyntaxException, ClassNotFoundException {
        Path root = Path.of(ActorScheduler.class.getProtectionDomain().getCodeSource().getLocation().toURI());
        List<Class<?>> types = new ArrayList<>();
        try (Stream<Path> files = Files.walk(root)) {
            for (Path p : (Iterable<Path>) files.filter(f -> f.toString().endsWith(".class"))::iterator) {
                String name = root.relativize(p).toString().replace('/', '.').replace('\\', '.');
                name = name.substring(0, name.length() - ".class".length());
                if (!name.startsWith("io.reactoractor.") || name.startsWith(INTERNAL) || name.endsWith("package-info")) {
                    continue;
                }
                Class<?> c = Class.forName(name, false, PublicApiSurfaceTest.class.getClassLoader());
                if (isApi(c)) {
                    types.add(c);
                }
            }
        }
        return types;
    }

    private static boolean isApi(Class<?> c) {
        for (Class<?> k = c; k != null; k = k.getEnclosingClass()) {
            if (!visible(k.getModifiers()) || k.isAnonymousClass() || k.isLocalClass()) {
                return false;
            }
        }
        return true;
    }
}
