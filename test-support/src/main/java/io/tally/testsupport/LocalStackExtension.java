package io.tally.testsupport;

import com.azure.cosmos.CosmosAsyncClient;
import io.tally.testsupport.cosmos.LocalCosmos;
import io.tally.testsupport.kafka.TestKafka;
import io.tally.testsupport.registry.LocalSchemaRegistry;
import java.util.Set;
import org.junit.jupiter.api.extension.ExtensionContext;
import org.junit.jupiter.api.extension.ParameterContext;
import org.junit.jupiter.api.extension.ParameterResolver;

/**
 * Hands tests the real parts, each started at most once per test JVM and only when a test asks:
 * declare a parameter of type {@link TestKafka}, {@link LocalSchemaRegistry}, {@link LocalCosmos} or
 * {@link CosmosAsyncClient} (a new client per parameter, closed after the test or class).
 *
 * <pre>{@code
 * @ExtendWith(LocalStackExtension.class)
 * class MyIT {
 *     @Test void works(TestKafka kafka, LocalSchemaRegistry registry, CosmosAsyncClient cosmos) { ... }
 * }
 * }</pre>
 */
public final class LocalStackExtension implements ParameterResolver {
    private static final Set<Class<?>> SUPPORTED =
            Set.of(TestKafka.class, LocalSchemaRegistry.class, LocalCosmos.class, CosmosAsyncClient.class);

    @Override
    public boolean supportsParameter(ParameterContext p, ExtensionContext e) {
        return SUPPORTED.contains(p.getParameter().getType());
    }

    @Override
    public Object resolveParameter(ParameterContext p, ExtensionContext e) {
        Class<?> type = p.getParameter().getType();
        if (type == TestKafka.class) return TestKafka.get();
        if (type == LocalSchemaRegistry.class) return LocalSchemaRegistry.get();
        if (type == LocalCosmos.class) return LocalCosmos.get();
        CosmosAsyncClient client = LocalCosmos.get().newAsyncClient();
        // Closed with the scope that asked for it (the test method, or the class for @BeforeAll parameters).
        e.getStore(ExtensionContext.Namespace.create(LocalStackExtension.class, p.getIndex()))
                .put("client", (ExtensionContext.Store.CloseableResource) client::close);
        return client;
    }
}
