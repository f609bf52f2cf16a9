package io.reactoractor.benchmarks.savina;

import java.time.Duration;
import java.util.Locale;

import com.typesafe.config.Config;
import com.typesafe.config.ConfigFactory;
import io.reactoractor.ActorScheduler;
import org.apache.pekko.actor.ActorSystem;

/**
 * The two runtimes compared by {@link SavinaRunner}, with the same number of threads running actors.
 *
 * <ul>
 *   <li><b>reactor-actor</b>: {@code ActorScheduler} with {@code threads} carriers, FAIR ordering (the
 *       default; {@code --ordering=fifo} for comparison), 5 ms quota (the default), compensating threads disabled and the hog threshold raised
 *       to 1 s. Compensation is off so that the pool can never grow beyond {@code threads} (Pekko's
 *       dispatcher does not grow either); the threshold is raised because the counting producer
 *       legitimately sends all its numbers in one message, tens of ms, which would otherwise log a
 *       hog warning in every run. Besides the carriers the scheduler has its timer thread.</li>
 *   <li><b>pekko</b>: an {@code ActorSystem} whose default dispatcher is a fork-join executor with
 *       exactly {@code threads} threads ({@code parallelism-min = parallelism-max = threads}) and
 *       Pekko's default throughput (5 messages per actor per turn) and unbounded mailboxes. The
 *       internal dispatcher (system actors) is pointed at the default dispatcher, so no other pool
 *       runs actors. Besides the dispatcher threads Pekko has its scheduler thread.</li>
 * </ul>
 */
public final class SavinaPeers {

    /** Label of this library in reports. */
    public static final String OURS = "reactor-actor";
    /** Label of Pekko in reports. */
    public static final String PEKKO = "pekko";

    private SavinaPeers() {
    }

    /**
     * @param threads  carrier threads
     * @param ordering FAIR (the default, what the report shows unless told otherwise) or FIFO
     * @return a started scheduler
     */
    public static ActorScheduler newScheduler(int threads, ActorScheduler.Ordering ordering) {
        return ActorScheduler.builder().name("savina").threads(threads)
                .ordering(ordering)
                .maxCompensatingThreads(0)
                .hogThreshold(Duration.ofSeconds(1))
                .build();
    }

    /**
     * @param threads dispatcher threads
     * @return the Pekko configuration used by {@link #newActorSystem}
     */
    public static Config pekkoConfig(int threads) {
        String conf = String.format(Locale.ROOT, String.join("\n",
                "pekko {",
                "  loglevel = WARNING",
                "  stdout-loglevel = WARNING",
                "  log-dead-letters = off",
                "  log-dead-letters-during-shutdown = off",
                "  actor {",
                "    default-dispatcher {",
                "      executor = fork-join-executor",
                "      fork-join-executor {",
                "        parallelism-min = %1$d",
                "        parallelism-factor = 1.0",
                "        parallelism-max = %1$d",
                "      }",
                "    }",
                "    internal-dispatcher = pekko.actor.default-dispatcher",
                "  }",
                "}"), threads);
        return ConfigFactory.parseString(conf).withFallback(ConfigFactory.load());
    }

    /**
     * @param threads dispatcher threads
     * @return a started actor system
     */
    public static ActorSystem newActorSystem(int threads) {
        return ActorSystem.create("savina", pekkoConfig(threads));
    }
}
