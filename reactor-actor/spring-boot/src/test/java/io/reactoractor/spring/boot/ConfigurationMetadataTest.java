package io.reactoractor.spring.boot;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.io.InputStream;
import java.net.URL;
import java.nio.charset.StandardCharsets;
import java.util.Collections;
import java.util.regex.Pattern;

import org.junit.jupiter.api.Test;
import org.springframework.boot.autoconfigure.AutoConfiguration;
import org.springframework.boot.context.annotation.ImportCandidates;

/** The jar registers its auto-configuration and describes its properties for IDE completion. */
class ConfigurationMetadataTest {

    @Test
    void theAutoConfigurationIsRegistered() {
        assertThat(ImportCandidates.load(AutoConfiguration.class, getClass().getClassLoader()))
                .contains(ReactorActorAutoConfiguration.class.getName());
    }

    @Test
    void theMetadataDescribesEveryPropertyWithItsDefault() throws IOException {
        String metadata = ownMetadata();
        for (String property : new String[] {"name", "threads", "quota", "preemption-granularity", "hog-threshold",
                "max-compensating-threads", "ordering", "shutdown-timeout", "group-idle-timeout", "max-groups", "pull.enabled", "pull.retention",
                "pull.ack-timeout", "pull.max-waiting-pulls", "pull.max-messages-per-pull",
                "pull.max-bytes-per-pull", "pull.idle-timeout", "pull.max-groups", "pull.max-subjects",
                "pull.max-committed-offsets", "pull.offset-retention"}) {
            assertThat(metadata).containsPattern("\"name\"\\s*:\\s*\"" + Pattern.quote("reactor.actor." + property) + "\"");
        }
        assertThat(metadata).containsPattern("\"defaultValue\"\\s*:\\s*\"500us\"")
                .containsPattern("\"defaultValue\"\\s*:\\s*\"4MB\"");
    }

    /** Every jar of Spring Boot has a metadata file of its own: this module's names its properties class. */
    private String ownMetadata() throws IOException {
        for (URL url : Collections.list(getClass().getClassLoader()
                .getResources("META-INF/spring-configuration-metadata.json"))) {
            try (InputStream in = url.openStream()) {
                String text = new String(in.readAllBytes(), StandardCharsets.UTF_8);
                if (text.contains(ReactorActorProperties.class.getName())) {
                    return text;
                }
            }
        }
        throw new AssertionError("no spring-configuration-metadata.json describes " + ReactorActorProperties.class);
    }
}
