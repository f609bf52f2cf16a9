package io.reactoractor.pull.redis;

import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;

/**
 * A real {@code redis-server} for tests, on a free loopback port: the one on the {@code PATH} when there
 * is one, else the Linux x86-64 binary shipped in {@code com.github.codemonstur:embedded-redis}
 * (copied to a temporary file). Optionally with AOF ({@code appendfsync always}), restartable on the
 * same port and data directory.
 */
public final class TestRedis implements AutoCloseable {

    private static final String SHIPPED = "/redis-server-6.2.6-v5-linux-amd64";

    private final Path dir;
    private final int port;
    private final boolean aof;
    private Process process;

    private TestRedis(boolean aof) throws IOException {
        this.dir = Files.createTempDirectory("test-redis");
        this.port = freePort();
        this.aof = aof;
    }

    /**
     * @param aof whether to log every write to an append-only file, fsynced at each write
     * @return a started server
     * @throws IOException if it cannot start
     */
    public static TestRedis start(boolean aof) throws IOException {
        TestRedis r = new TestRedis(aof);
        r.startProcess();
        return r;
    }

    /** @return {@code redis://127.0.0.1:<port>} */
    public String uri() {
        return "redis://127.0.0.1:" + port;
    }

    /** Kills the server at once (SIGKILL): what a crash leaves is what AOF kept. */
    public void kill() throws InterruptedException {
        process.destroyForcibly();
        process.waitFor(30, TimeUnit.SECONDS);
    }

    /** Starts the server again on the same port and directory (after {@link #kill}). */
    public void restart() throws IOException {
        startProcess();
    }

    /**
     * Sends one command on a connection of its own (inline protocol) and reads the first reply line.
     *
     * @param command e.g. {@code DEBUG SLEEP 5}
     * @return the reply's first line
     * @throws IOException on a connection error
     */
    public String command(String command) throws IOException {
        try (Socket s = new Socket(InetAddress.getLoopbackAddress(), port)) {
            s.setSoTimeout(60_000);
            OutputStream out = s.getOutputStream();
            out.write((command + "\r\n").getBytes(StandardCharsets.UTF_8));
            out.flush();
            InputStream in = s.getInputStream();
            StringBuilder line = new StringBuilder();
            int c;
            while ((c = in.read()) != -1 && c != '\n') {
                if (c != '\r') {
                    line.append((char) c);
                }
            }
            return line.toString();
        }
    }

    @Override
    public void close() throws Exception {
        if (process != null) {
            process.destroyForcibly();
            process.waitFor(30, TimeUnit.SECONDS);
        }
        try (var files = Files.walk(dir)) {
            files.sorted(java.util.Comparator.reverseOrder()).forEach(p -> p.toFile().delete());
        }
    }

    private void startProcess() throws IOException {
        List<String> cmd = new ArrayList<>();
        cmd.add(executable().toString());
        cmd.addAll(List.of("--port", Integer.toString(port), "--bind", "127.0.0.1", "--protected-mode", "no",
                "--save", "", "--dir", dir.toString(), "--daemonize", "no", "--loglevel", "warning"));
        if (aof) {
            cmd.addAll(List.of("--appendonly", "yes", "--appendfsync", "always"));
        } else {
            cmd.addAll(List.of("--appendonly", "no"));
        }
        process = new ProcessBuilder(cmd).redirectErrorStream(true)
                .redirectOutput(dir.resolve("redis.log").toFile()).start();
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(30);
        while (true) {
            try {
                if ("+PONG".equals(command("PING"))) {
                    return;
                }
            } catch (IOException notYet) {
                // not listening yet
            }
            if (!process.isAlive() || System.nanoTime() > deadline) {
                throw new IOException("redis-server did not start: " + Files.readString(dir.resolve("redis.log")));
            }
            try {
                Thread.sleep(20);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                throw new IOException(e);
            }
        }
    }

    private static Path executable() throws IOException {
        for (String p : System.getenv().getOrDefault("PATH", "").split(java.io.File.pathSeparator)) {
            Path candidate = Path.of(p, "redis-server");
            if (!p.isEmpty() && Files.isExecutable(candidate)) {
                return candidate;
            }
        }
        return Shipped.PATH;
    }

    /** The shipped binary, copied once per JVM. */
    private static final class Shipped {
        static final Path PATH = copy();

        private static Path copy() {
            try (InputStream in = TestRedis.class.getResourceAsStream(SHIPPED)) {
                if (in == null) {
                    throw new IllegalStateException("no redis-server on the PATH and " + SHIPPED
                            + " not on the classpath (com.github.codemonstur:embedded-redis)");
                }
                Path file = Files.createTempFile("redis-server", "");
                Files.copy(in, file, StandardCopyOption.REPLACE_EXISTING);
                if (!file.toFile().setExecutable(true)) {
                    throw new IllegalStateException("cannot make " + file + " executable");
                }
                file.toFile().deleteOnExit();
                return file;
            } catch (IOException e) {
                throw new IllegalStateException(e);
            }
        }
    }

    private static int freePort() throws IOException {
        try (ServerSocket s = new ServerSocket(0, 1, InetAddress.getLoopbackAddress())) {
            return s.getLocalPort();
        }
    }
}
