package dgr.node.http;

import dgr.node.ServingOptions;
import io.helidon.common.configurable.Resource;
import io.helidon.common.tls.Tls;
import java.nio.file.Files;
import java.nio.file.Path;

/** HTTPS from a PEM private key and certificate chain ({@code --ssl-key-file}, {@code --ssl-cert-file}), as llama-server takes them. */
public final class NodeTls {
    private NodeTls() {}

    public static Tls of(ServingOptions serving) {
        Path key = readable(serving.sslKeyFile(), "--ssl-key-file");
        Path cert = readable(serving.sslCertFile(), "--ssl-cert-file");
        try {
            return Tls.builder()
                    .privateKey(k -> k.pem(p -> p.key(Resource.create(key)).certChain(Resource.create(cert))))
                    .privateKeyCertChain(k -> k.pem(p -> p.certChain(Resource.create(cert))))
                    .build();
        } catch (RuntimeException e) {
            throw new IllegalArgumentException("cannot use " + key + " and " + cert + " for TLS (PEM private key and"
                    + " certificate chain expected): " + e.getMessage(), e);
        }
    }

    private static Path readable(Path p, String flag) {
        if (!Files.isReadable(p)) throw new IllegalArgumentException(flag + ": cannot read " + p);
        return p;
    }
}
