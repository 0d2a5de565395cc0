package dgr.gguf.synth;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.file.Files;
import java.nio.file.Path;
import java.security.MessageDigest;
import java.util.HexFormat;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

/**
 * Synthesized files keep their bytes: the presets below (Q8_0, seed 42) between them use every
 * line of {@link SynthArchitecture} that is not plain and every preset variant, so a change to how
 * {@link Synth} chooses keys or tensors that was meant to change nothing fails here. A change
 * meant to change files updates these SHA-256 (printed by the failure).
 */
class SynthBytesTest {
    @TempDir
    Path dir;

    @ParameterizedTest(name = "{0}")
    @CsvSource({
        "deepseek2-tiny, a9aef75e78b5c5e1c69fba679aca4eaeefeef3efa36b142efc828faa5db843fe",
        "deepseek2-lite-tiny, 1cfac9957146fdcb2f0b31ac2ffd9c531bebca94e24d3a08cd9369785f9dc804",
        "deepseek2-kvb-tiny, bd784a815495669579960495605601be09de4a94862552ac697b5252527577ae",
        "glm4moe-qknorm-tiny, e75948bc34fe1337613c527aa109a6a341b8aac2e11e4b40b2f7dfaa26e7f029",
        "gpt-oss-tiny, 3c7c7b198a52a09c5a3cc2e913c066a79950b2faaec230a559674c4a0334b856",
        "phimoe-tiny, a306e320140df22fbf42be9ca3a3228dc0010b476f770a7a595c52f7fc654de6",
        "phi2-tiny, c98d6c73b6fe6182318121d3bf53918911c63a25fd29ea82bd9b6196d8a7f978",
        "ernie4_5-moe-tiny, ea64dd625a9631dd5595e592170f2f4f2ce0b2478cd09038a20c03d59f6d7165",
        "llama4-tiny, 1820fcfa7c4acff1b35148c82f6996201887df9a148577865ca475feb10a46cd",
        "granite-tiny, 25e8dddbe98c7778112c4eef1465ee6999cf85bf6d583117f5ed1d5aac327fc0",
        "minicpm-tiny, 4796eef0f1df877d01cff977dc260353fa5a8263745931fed8b58f1eb5bcd646",
        "gemma-tiny, b30537e2a342c370764946a6bc09003aaa5ac7073d19c11f8286715b5f4bc1b1",
        "gemma2-tiny, 271f89f68f79ef3a698a383e3337de9993d0699eaddb67c423f95fdcbf68ed65",
        "olmo3-tiny, 0c2af0b98dcd16800a7d19950d018fac1b6948b549954f6f4265604a7b9b9f70",
        "exaone4-swa-tiny, 8401c3245ba65abe0fe200f6b85a1632a66c3ee48ef5ef4273c4539426f26673",
        "stablelm-qk-tiny, 07f6055fbbc1b4ad11a1f2546c4a289cf3429c3f6e54b9165cf5c0196f6382f4",
        "qwen2moe-tiny, 3adfe2b89be33f2fe210844e32d451505b34795bf8cda24b8343e56d2c912aad",
        "command-r-tiny, 8260b253d62c38b43a0cdb648c248aa5d86ed5c040dc7018339fe56609214d96",
        "gptneox-tiny, 796d55df04441719bcc9147390ae744186c530db64b52becd16d1c63d53359ec",
        "bailingmoe-tiny, e6b66846c6979de86eb12e6db33b04b8d678df81f6810f25174725b15f6d2067",
        "deepseek-tiny, 0cdecca857e296fe56c4c7afea91a222b1d8f9dd9e7cdbad9b9fcbcf6745359a",
        "minimax-m2-tiny, 7e274203e6ceccf214ef6ab86c59f95a4c71af1e141e0423a2582103538a37ac",
        "dots1-tiny, dc7b0c79e85fb3d0a7d60002e1ae0aa72494c6cc78d2de7fc72d968f28de2435",
        "mistral3-tiny, 1f1bc98229844929fe7975d17873832b47a10d4eda9d905a6ef637c57d49df14",
    })
    void synthesizedFilesKeepTheirBytes(String preset, String sha256) throws Exception {
        Path f = dir.resolve(preset + ".gguf");
        Synth.write(SynthPreset.byName(preset), QuantMix.parse("Q8_0"), 42, f);
        String actual = HexFormat.of().formatHex(MessageDigest.getInstance("SHA-256").digest(Files.readAllBytes(f)));
        assertThat(actual).as(preset + " Q8_0 seed 42").isEqualTo(sha256);
    }
}
