package dgr.cli;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dgr.engine.chat.ChatTemplate;
import dgr.engine.sampler.SamplerConfig;
import dgr.node.NodeConfig;
import org.junit.jupiter.api.Test;
import picocli.CommandLine;

/** Issue 27, items 4 and 5: dgr serve takes llama-server's operator flags and run's sampling defaults. */
class ServeFlagsTest {
    static NodeConfig serve(String... args) {
        ServeCommand cmd = new ServeCommand();
        new CommandLine(cmd).parseArgs(args);
        return cmd.config();
    }

    @Test
    void llamaServerAliasesSetTheSessionLimitAndTokenBudget() {
        NodeConfig c = serve("-m", "x.gguf", "-np", "4", "-b", "128");
        assertThat(c.maxBatchSessions()).isEqualTo(4);
        assertThat(c.scheduler().maxBatchTokens()).isEqualTo(128);
        assertThat(serve("-m", "x.gguf", "--parallel", "6").maxBatchSessions()).isEqualTo(6);
        assertThat(serve("-m", "x.gguf", "--max-batch-rows", "3").maxBatchSessions()).isEqualTo(3);
        assertThat(serve("-m", "x.gguf", "--batch-tokens", "96").scheduler().maxBatchTokens()).isEqualTo(96);
    }

    @Test
    void aTokenBudgetBelowTheSessionLimitIsRefusedWithBothFlags() {
        assertThatThrownBy(() -> serve("-m", "x.gguf", "-np", "8", "-b", "4"))
                .hasMessageContaining("--batch-tokens 4").hasMessageContaining("--parallel 8");
    }

    @Test
    void samplingDefaultsAreRunsUnlessToldOtherwise() {
        SamplerConfig d = serve("-m", "x.gguf").serving().sampling();
        RunCommand r = new RunCommand();
        new CommandLine(r).parseArgs();
        assertThat(d).isEqualTo(r.sampling.config());
        assertThat(d).isEqualTo(SamplerConfig.llamaCppDefaults(-1));
        SamplerConfig told = serve("-m", "x.gguf", "--temp", "0.2", "--top-k", "5", "--top-p", "0.5", "--min-p", "0.1",
                "--repeat-penalty", "1.3", "--seed", "9").serving().sampling();
        assertThat(told).isEqualTo(new SamplerConfig(0.2f, 5, 0.5f, 0.1f, 1.3f, 0f, 0f, 64, 9));
    }

    @Test
    void nPredictCapsEveryRequest() {
        assertThat(serve("-m", "x.gguf", "-n", "77").serving().maxTokens()).isEqualTo(77);
    }

    @Test
    void chatTemplateByNameOrTextAndUnknownNamesRefused() {
        assertThat(serve("-m", "x.gguf", "--chat-template", "chatml").serving().chatTemplate()).isEqualTo(ChatTemplate.CHATML);
        assertThat(serve("-m", "x.gguf", "--chat-template", "{{ messages[0]['content'] }}").serving().chatTemplate())
                .isEqualTo("{{ messages[0]['content'] }}");
        assertThatThrownBy(() -> serve("-m", "x.gguf", "--chat-template", "llama99"))
                .hasMessageContaining("'llama99' is neither a built-in");
        assertThatThrownBy(() -> serve("-m", "x.gguf", "--chat-template-file", "/nonexistent.jinja"))
                .hasMessageContaining("--chat-template-file").hasMessageContaining("/nonexistent.jinja");
    }

    @Test
    void corsAndTlsFlagsReachTheNode() {
        NodeConfig c = serve("-m", "x.gguf", "--allowed-origins", "http://a.example,http://b.example",
                "--ssl-key-file", "k.pem", "--ssl-cert-file", "c.pem");
        assertThat(c.serving().allowedOrigins()).containsExactly("http://a.example", "http://b.example");
        assertThat(c.serving().tls()).isTrue();
        assertThatThrownBy(() -> serve("-m", "x.gguf", "--ssl-key-file", "k.pem"))
                .hasMessageContaining("--ssl-key-file and --ssl-cert-file");
    }
}
