// The GGUF reader on the real stories260K file and on hand-made broken files.
#include <cstring>
#include <functional>
#include <limits>
#include <tuple>
#include <fstream>

#include "core/error.hpp"
#include <nlohmann/json.hpp>
#include "model/formats/gguf_file.hpp"
#include "model/gguf_decoder.hpp"
#include "support/test_support.hpp"

using namespace attnviz;
using attnviz::test::data_file;
using attnviz::test::TempDir;

namespace {

// Writes GGUF files byte by byte: just enough of the format to break it on purpose.
struct GgufBytes {
  std::string bytes;
  template <typename T>
  GgufBytes& put(T value) {
    bytes.append(reinterpret_cast<const char*>(&value), sizeof value);
    return *this;
  }
  GgufBytes& str(const std::string& text) {
    put<std::uint64_t>(text.size());
    bytes += text;
    return *this;
  }
  GgufBytes& header(std::uint32_t version, std::uint64_t tensors, std::uint64_t keys) {
    bytes += "GGUF";
    return put(version).put(tensors).put(keys);
  }
  // A tensor entry: name, dims, type, offset.
  GgufBytes& tensor(const std::string& name, std::vector<std::int64_t> dims, std::uint32_t type, std::uint64_t offset) {
    str(name).put<std::uint32_t>(static_cast<std::uint32_t>(dims.size()));
    for (auto d : dims) put(d);
    return put(type).put(offset);
  }
  GgufBytes& pad_to(std::size_t alignment) {
    while (bytes.size() % alignment) bytes += '\0';
    return *this;
  }
  std::string write(const TempDir& dir) const {
    const std::string path = dir.file("m.gguf");
    std::ofstream(path, std::ios::binary) << bytes;
    return path;
  }
};

std::string error_of(const std::string& path) {
  try {
    GgufFile file(path);
  } catch (const InputError& e) {
    return e.what();
  }
  return "(no error)";
}

}  // namespace

TEST_CASE("GGUF reader: stories260K metadata and tensors", "[gguf]") {
  const GgufFile file(data_file("stories260k/stories260K.gguf"));
  CHECK(file.version() == 3);
  CHECK(file.tensors().size() == 48);
  CHECK(file.string("general.architecture") == "llama");
  CHECK(file.integer("llama.block_count") == 5);
  CHECK(file.integer("llama.attention.head_count_kv") == 4);
  CHECK(file.number("llama.attention.layer_norm_rms_epsilon").value() == Approx(1e-5));
  REQUIRE(file.string_array("tokenizer.ggml.tokens") != nullptr);
  CHECK(file.string_array("tokenizer.ggml.tokens")->size() == 512);
  CHECK(file.string_array("tokenizer.ggml.tokens")->at(403) == "\xE2\x96\x81Once");
  CHECK(!file.has("no.such.key"));
  CHECK_THROWS_WITH(file.integer("general.architecture"),
                    Catch::EndsWith("metadata general.architecture: expected an integer, got a string"));
  const GgufTensorInfo& embedding = file.tensor("token_embd.weight", {64, 512}, "token embedding");
  CHECK(embedding.num_rows() == 512);
  CHECK_THROWS_WITH(file.tensor("token_embd.weight", {512, 64}, "token embedding"),
                    Catch::EndsWith("tensor token_embd.weight: expected dims [512, 64] (token embedding), got [64, 512]"));
  CHECK_THROWS_WITH(file.tensor("blk.9.attn_q.weight", "W_Q of layer 9"),
                    Catch::EndsWith("missing tensor blk.9.attn_q.weight (W_Q of layer 9)"));
}

TEST_CASE("GGUF reader: layer 0's W_Q read from the file is the transpose of the bundled JSON's", "[gguf]") {
  const GgufFile file(data_file("stories260k/stories260K.gguf"));
  const Matrix w_q_out_in = file.matrix(file.tensor("blk.0.attn_q.weight", "W_Q"));
  const nlohmann::json layer = nlohmann::json::parse(attnviz::test::read_file(data_file("stories260k/layer0.json")));
  REQUIRE(w_q_out_in.rows() == 64);
  double worst = 0;
  for (int in = 0; in < 64; ++in)
    for (int out = 0; out < 64; ++out)
      worst = std::max(worst, std::abs(layer["W_Q"][in][out].get<double>() - w_q_out_in(out, in)));
  CHECK(worst < 1e-7);  // the JSON has 9 significant digits
}

TEST_CASE("GGUF reader: rows picked from a tensor equal the same rows of the whole matrix", "[gguf]") {
  const GgufFile file(data_file("stories260k/stories260K.gguf"));
  const GgufTensorInfo& embedding = file.tensor("token_embd.weight", "token embedding");
  const Matrix all = file.matrix(embedding);
  const std::vector<std::int32_t> ids = {1, 403, 0, 511, 403};
  const Matrix picked = file.matrix_rows(embedding, ids);
  REQUIRE(picked.rows() == 5);
  REQUIRE(picked.cols() == 64);
  for (std::size_t i = 0; i < ids.size(); ++i) CHECK(picked.row(static_cast<Eigen::Index>(i)) == all.row(ids[i]));
  CHECK_THROWS_WITH(file.matrix_rows(embedding, {512}), Catch::EndsWith("tensor token_embd.weight: row 512 of 512 requested"));
}

TEST_CASE("GGUF reader: broken files are refused with one line naming the fault", "[gguf]") {
  TempDir dir;
  GgufBytes magic;
  magic.bytes = "GGML1234567890123456789012";
  CHECK_THAT(error_of(magic.write(dir)), Catch::Contains("not a GGUF file"));

  CHECK_THAT(error_of(GgufBytes().header(4, 0, 0).write(dir)), Catch::Contains("GGUF version 4 is not supported"));
  CHECK_THAT(error_of(GgufBytes().header(3, 0, 1).str("general.name").write(dir)),
             Catch::Contains("truncated: the type of metadata general.name at byte"));
  CHECK_THAT(error_of(GgufBytes().header(3, 0, 1000000).write(dir)),
             Catch::Contains("1000000 metadata keys and 0 tensors cannot fit in a file of 24 bytes"));
  GgufBytes absurd;
  absurd.header(3, 0, 1).str("tokenizer.ggml.tokens").put<std::uint32_t>(9).put<std::uint32_t>(8).put<std::uint64_t>(1ULL << 60);
  CHECK_THAT(error_of(absurd.write(dir)), Catch::Contains("metadata tokenizer.ggml.tokens: an array of 1152921504606846976 elements cannot fit"));
  GgufBytes twice;
  twice.header(3, 0, 2).str("a").put<std::uint32_t>(4).put<std::uint32_t>(1).str("a").put<std::uint32_t>(4).put<std::uint32_t>(2);
  CHECK_THAT(error_of(twice.write(dir)), Catch::Contains("metadata key a appears twice"));

  GgufBytes overflow;
  overflow.header(3, 1, 0).tensor("w", {1LL << 40, 1LL << 40}, 0, 0).pad_to(32);
  CHECK_THAT(error_of(overflow.write(dir)), Catch::Contains("tensor w: the product of its dimensions overflows"));
  GgufBytes past_end;
  past_end.header(3, 1, 0).tensor("w", {4, 4}, 0, 0).pad_to(32).put<float>(1.0f);
  CHECK_THAT(error_of(past_end.write(dir)),
             Catch::Contains("tensor w (64 bytes at offset 0) runs past the end of the file (4 bytes of tensor data)"));
  GgufBytes unknown;
  unknown.header(3, 1, 0).tensor("w", {4}, 99, 0).pad_to(32);
  CHECK_THAT(error_of(unknown.write(dir)), Catch::Contains("tensor w: unknown tensor type id 99"));
  GgufBytes overlap;
  overlap.header(3, 2, 0).tensor("a", {16}, 0, 0).tensor("b", {16}, 0, 32).pad_to(32);
  overlap.bytes.append(96, '\0');
  CHECK_THAT(error_of(overlap.write(dir)), Catch::EndsWith("tensors a (bytes [0, 64)) and b (bytes [32, 96)) of the tensor data overlap"));
  GgufBytes misaligned;
  misaligned.header(3, 1, 0).tensor("a", {4}, 0, 4).pad_to(32);
  misaligned.bytes.append(64, '\0');
  CHECK_THAT(error_of(misaligned.write(dir)), Catch::Contains("tensor a: offset 4 is not a multiple of the alignment 32"));
  CHECK_THAT(error_of(dir.file("missing.gguf")), Catch::Contains("missing.gguf: cannot read"));
}

// llama.cpp #3298: a big-endian GGUF was refused as "GGUF version 50331648 is not supported".
TEST_CASE("GGUF reader: a big-endian file is named as such, with the version it would have", "[gguf][errors]") {
  TempDir dir;
  GgufBytes big_endian;
  big_endian.bytes = "GGUF";
  big_endian.bytes += std::string("\0\0\0\3", 4);  // version 3, most significant byte first
  big_endian.put<std::uint64_t>(0).put<std::uint64_t>(0);
  CHECK(error_of(big_endian.write(dir)) ==
        dir.file("m.gguf") + ": GGUF version 50331648 (0x03000000) is version 3 with its bytes reversed: the file is "
                             "big-endian (written for a big-endian machine such as s390x); attnviz reads little-endian GGUF files only");
  CHECK(error_of(GgufBytes().header(1, 0, 0).write(dir)) == dir.file("m.gguf") + ": GGUF version 1 is not supported (2 and 3 are)");
  CHECK(error_of(GgufBytes().header(0x00010000, 0, 0).write(dir)) ==
        dir.file("m.gguf") + ": GGUF version 65536 (0x00010000) is version 256 with its bytes reversed: the file is "
                             "big-endian (written for a big-endian machine such as s390x); attnviz reads little-endian GGUF files only");
}

// A metadata value of the wrong type named its type by number ("GGUF value type 9"); an array
// says nothing until its element type is named.
TEST_CASE("GGUF reader: a metadata value of the wrong type is named by its type and element type in words", "[gguf][errors]") {
  TempDir dir;
  constexpr std::uint32_t kUint8 = 0, kInt8 = 1, kUint32 = 4, kFloat32 = 6, kArray = 9, kInt64 = 11;
  GgufBytes g;
  g.header(3, 0, 5);
  g.str("tokenizer.ggml.token_type").put(kArray).put(kFloat32).put<std::uint64_t>(2).put(1.0f).put(3.0f);
  g.str("tokenizer.ggml.tokens").put(kArray).put(kInt64).put<std::uint64_t>(1).put<std::int64_t>(7);
  g.str("general.name").put(kUint32).put<std::uint32_t>(7);
  g.str("general.flag").put(kInt8).put<std::int8_t>(1);
  g.str("general.small").put(kUint8).put<std::uint8_t>(1);
  const GgufFile file(g.write(dir));
  const std::string at = dir.file("m.gguf") + ": metadata ";
  CHECK_THROWS_WITH(file.integer_array("tokenizer.ggml.token_type"),
                    at + "tokenizer.ggml.token_type: expected an array of integers, got an array of float32");
  CHECK_THROWS_WITH(file.string_array("tokenizer.ggml.tokens"), at + "tokenizer.ggml.tokens: expected an array of strings, got an array of int64");
  CHECK_THROWS_WITH(file.integer("tokenizer.ggml.tokens"), at + "tokenizer.ggml.tokens: expected an integer, got an array of int64");
  CHECK_THROWS_WITH(file.string("general.name"), at + "general.name: expected a string, got a uint32");
  CHECK_THROWS_WITH(file.boolean("general.flag"), at + "general.flag: expected a boolean, got an int8");
  CHECK_THROWS_WITH(file.string("general.small"), at + "general.small: expected a string, got a uint8");
}

TEST_CASE("GGUF reader: arrays of arrays and unknown value types are named", "[gguf][errors]") {
  TempDir dir;
  GgufBytes nested;
  nested.header(3, 0, 1).str("a").put<std::uint32_t>(9).put<std::uint32_t>(9).put<std::uint64_t>(0);
  CHECK(error_of(nested.write(dir)) == dir.file("m.gguf") + ": metadata a: arrays of arrays are not supported");
  GgufBytes unknown_element;
  unknown_element.header(3, 0, 1).str("a").put<std::uint32_t>(9).put<std::uint32_t>(13).put<std::uint64_t>(0);
  CHECK(error_of(unknown_element.write(dir)) == dir.file("m.gguf") + ": metadata a: an array of unknown value type 13 (GGUF knows 0-12)");
  GgufBytes unknown;
  unknown.header(3, 0, 1).str("a").put<std::uint32_t>(13).put<std::uint32_t>(0);
  CHECK(error_of(unknown.write(dir)) == dir.file("m.gguf") + ": metadata a: unknown value type 13 (GGUF knows 0-12)");
}

// Issue 24's safetensors fault in GGUF: bytes between tensors that no tensor covers were
// accepted; llama.cpp's gguf.cpp wants each tensor where the previous one's padded end is.
TEST_CASE("GGUF reader: tensors follow each other, padded to the alignment, and a gap is refused naming its bytes", "[gguf][errors]") {
  TempDir dir;
  const auto two_tensors = [&dir](std::uint64_t offset_b) {
    GgufBytes g;
    g.header(3, 2, 0).tensor("a", {4}, 0, 0).tensor("b", {4}, 0, offset_b).pad_to(32);
    g.bytes.append(offset_b + 16, '\0');
    return error_of(g.write(dir));
  };
  CHECK(two_tensors(32) == "(no error)");  // a's 16 bytes, padded to 32
  CHECK(two_tensors(64) == dir.file("m.gguf") + ": bytes [32, 64) of the tensor data belong to no tensor (the gap before tensor b "
                                                "(bytes [64, 80)); each tensor starts where the one before ends, padded to the alignment 32)");
  GgufBytes late_first;
  late_first.header(3, 1, 0).tensor("a", {4}, 0, 32).pad_to(32);
  late_first.bytes.append(48, '\0');
  CHECK(error_of(late_first.write(dir)) == dir.file("m.gguf") + ": bytes [0, 32) of the tensor data belong to no tensor (the gap before "
                                                               "tensor a (bytes [32, 48)); each tensor starts where the one before ends, padded to the alignment 32)");
}

// An alignment of 2^31 was refused as "truncated", naming neither the key nor its value.
TEST_CASE("GGUF reader: general.alignment is checked by name: a uint32 power of two that the file can hold", "[gguf][errors]") {
  TempDir dir;
  constexpr std::uint32_t kUint32 = 4, kUint64 = 10, kString = 8;
  const auto with_alignment = [&dir](std::uint32_t type, std::uint64_t alignment) {
    GgufBytes g;
    g.header(3, 1, 1).str("general.alignment").put(type);
    if (type == kUint64) g.put(alignment);
    else if (type == kUint32) g.put(static_cast<std::uint32_t>(alignment));
    else g.str("64");
    g.tensor("w", {4}, 0, 0).pad_to(64);
    g.bytes.append(16, '\0');
    return error_of(g.write(dir));
  };
  const std::string at = dir.file("m.gguf") + ": ";
  CHECK(with_alignment(kUint32, 64) == "(no error)");
  CHECK(with_alignment(kUint32, 0) == at + "metadata general.alignment: expected a power of two from 1 to 2^31 (a uint32), got 0");
  CHECK(with_alignment(kUint32, 48) == at + "metadata general.alignment: expected a power of two from 1 to 2^31 (a uint32), got 48");
  // llama.cpp's gguf_get_val_u32 aborts on another type, even a uint64 whose value would do.
  CHECK(with_alignment(kUint64, 64) == at + "metadata general.alignment: expected a uint32 (as llama.cpp reads it), got a uint64");
  CHECK(with_alignment(kUint64, 1ULL << 32) == at + "metadata general.alignment: expected a uint32 (as llama.cpp reads it), got a uint64");
  CHECK(with_alignment(kString, 0) == at + "metadata general.alignment: expected a uint32 (as llama.cpp reads it), got a string");
  GgufBytes no_data;  // the default alignment: the header's 57 bytes end before byte 64
  no_data.header(3, 1, 0).tensor("w", {4}, 0, 0);
  CHECK(error_of(no_data.write(dir)) == at + "the tensor data would start at byte 64 (the header's end, byte 57, rounded up to a "
                                             "multiple of the default alignment 32), past the end of the file (57 bytes): truncated");
  CHECK(with_alignment(kUint32, 1ULL << 31) ==
        at + "the tensor data would start at byte 2147483648 (the header's end, byte 90, rounded up to a multiple of metadata "
             "general.alignment 2147483648), past the end of the file (144 bytes): truncated, or a wrong general.alignment");
}

TEST_CASE("GGUF decoder: an unknown architecture is named with the supported ones", "[gguf]") {
  TempDir dir;
  GgufBytes mamba;
  mamba.header(3, 0, 1).str("general.architecture").put<std::uint32_t>(8).str("mamba");
  const GgufFile file(mamba.write(dir));
  CHECK_THROWS_WITH(decoder_config_from_gguf(file), Catch::EndsWith("architecture \"mamba\" is not supported (supported: gemma2, gemma3, gpt2, granite, llama, olmo2, phi3, qwen2, qwen3, smollm3)"));
}

namespace {

// A llama GGUF with only what decoder_config_from_gguf reads (1 layer, d_model 8, 2 heads, a
// [4, 8] token embedding) plus `extra_keys` metadata entries written by `extra`.
std::string llama_gguf(const TempDir& dir, std::uint64_t extra_keys, const std::function<void(GgufBytes&)>& extra) {
  constexpr std::uint32_t kUint32 = 4, kString = 8;  // GGUF value types
  GgufBytes g;
  g.header(3, 1, 5 + extra_keys).str("general.architecture").put(kString).str("llama");
  for (const auto& [key, value] : std::vector<std::pair<std::string, std::uint32_t>>{
           {"llama.block_count", 1}, {"llama.embedding_length", 8}, {"llama.attention.head_count", 2}, {"llama.feed_forward_length", 16}})
    g.str(key).put(kUint32).put(value);
  extra(g);
  g.tensor("token_embd.weight", {8, 4}, 0, 0).pad_to(32);
  g.bytes.append(8 * 4 * sizeof(float), '\0');
  return g.write(dir);
}

// One float32 metadata entry.
std::function<void(GgufBytes&)> float_key(const std::string& key, float value) {
  return [key, value](GgufBytes& g) { g.str(key).put<std::uint32_t>(6).put(value); };
}

std::string config_error(const std::string& path) {
  try {
    decoder_config_from_gguf(GgufFile(path));
  } catch (const InputError& e) {
    return e.what();
  }
  return "(no error)";
}

}  // namespace

// Found by a hostile tester: freq_base = +inf was accepted (and dumped as theta null). The rule
// is hf_decoder's too (require_positive_setting, require_rms_epsilon).
TEST_CASE("GGUF decoder: a RoPE base, scaling factor or RMSNorm epsilon no model can have is refused naming the key and value",
          "[gguf][errors]") {
  TempDir dir;
  const float inf = std::numeric_limits<float>::infinity(), nan = std::numeric_limits<float>::quiet_NaN();
  CHECK(config_error(llama_gguf(dir, 0, [](GgufBytes&) {})) == "(no error)");
  const std::vector<std::pair<std::function<void(GgufBytes&)>, std::string>> cases = {
      {float_key("llama.rope.freq_base", inf), "llama.rope.freq_base: expected a finite number > 0, got inf"},
      {float_key("llama.rope.freq_base", -1), "llama.rope.freq_base: expected a finite number > 0, got -1"},
      {float_key("llama.rope.freq_base", 0), "llama.rope.freq_base: expected a finite number > 0, got 0"},
      {float_key("llama.attention.layer_norm_rms_epsilon", nan), "llama.attention.layer_norm_rms_epsilon: expected a finite number >= 0, got nan"},
      {float_key("llama.attention.layer_norm_rms_epsilon", -0.5f), "llama.attention.layer_norm_rms_epsilon: expected a finite number >= 0, got -0.5"},
      {float_key("llama.attention.layer_norm_rms_epsilon", inf), "llama.attention.layer_norm_rms_epsilon: expected a finite number >= 0, got inf"},
      {float_key("llama.rope.scale_linear", -2), "llama.rope.scale_linear: expected a finite number > 0, got -2"},
      {float_key("llama.rope.scale_linear", inf), "llama.rope.scale_linear: expected a finite number > 0, got inf"},
  };
  for (const auto& [extra, message] : cases) {
    CAPTURE(message);
    CHECK(config_error(llama_gguf(dir, 1, extra)) == dir.file("m.gguf") + ": " + message);
  }
  const auto linear = [](float factor) {
    return [factor](GgufBytes& g) {
      g.str("llama.rope.scaling.type").put<std::uint32_t>(8).str("linear");
      float_key("llama.rope.scaling.factor", factor)(g);
    };
  };
  CHECK(config_error(llama_gguf(dir, 2, linear(-4))) == dir.file("m.gguf") + ": llama.rope.scaling.factor: expected a finite number > 0, got -4");
  CHECK(config_error(llama_gguf(dir, 2, linear(nan))) == dir.file("m.gguf") + ": llama.rope.scaling.factor: expected a finite number > 0, got nan");
  CHECK(config_error(llama_gguf(dir, 2, linear(4))) == "(no error)");
  const auto context = [](std::int32_t length) {
    return [length](GgufBytes& g) { g.str("llama.context_length").put<std::uint32_t>(5).put(length); };
  };
  CHECK_THAT(config_error(llama_gguf(dir, 1, context(-1))), Catch::EndsWith("metadata llama.context_length: expected a positive count, got -1"));
}

// A tester found llama.attention.sliding_window and llama.attn_logit_softcapping accepted
// silently. Keys that would change the maths are refused unless neutral; a sliding window, which
// llama.cpp's llama graph does not apply either, and keys attnviz does not know are warned about.
TEST_CASE("GGUF decoder: llama metadata that changes the maths is refused naming it, unknown llama keys are warned about",
          "[gguf][errors]") {
  TempDir dir;
  const std::string at = dir.file("m.gguf") + ": metadata ";
  const auto uint32_key = [](const std::string& key, std::uint32_t value) {
    return [key, value](GgufBytes& g) { g.str(key).put<std::uint32_t>(4).put(value); };
  };
  const auto bool_key = [](const std::string& key, bool value) {
    return [key, value](GgufBytes& g) { g.str(key).put<std::uint32_t>(7).put<std::uint8_t>(value); };
  };
  // llama.cpp's llama graph has no sliding window: the key is named, not refused.
  CHECK(decoder_config_from_gguf(GgufFile(llama_gguf(dir, 1, uint32_key("llama.attention.sliding_window", 4096)))).warnings ==
        std::vector<std::string>{dir.file("m.gguf") + ": metadata llama.attention.sliding_window = 4096: llama.cpp applies no sliding "
                                 "window for architecture llama, and neither does attnviz: every query sees all earlier keys"});
  CHECK(config_error(llama_gguf(dir, 1, float_key("llama.attn_logit_softcapping", 50))) ==
        at + "llama.attn_logit_softcapping = 50: attention scores would be soft-capped (c·tanh(s/c)), which attnviz "
             "does not apply for architecture llama");
  CHECK_THAT(config_error(llama_gguf(dir, 1, bool_key("llama.attention.causal", false))),
             Catch::EndsWith("llama.attention.causal = false: the attention mask would not be causal, which attnviz does "
                             "not apply for architecture llama"));
  CHECK_THAT(config_error(llama_gguf(dir, 1, uint32_key("llama.expert_count", 8))), Catch::Contains("llama.expert_count = 8: "));
  CHECK_THAT(config_error(llama_gguf(dir, 1, float_key("llama.embedding_scale", 12))), Catch::Contains("llama.embedding_scale = 12: "));
  CHECK(config_error(llama_gguf(dir, 1, uint32_key("llama.attention.value_length", 2))) ==
        at + "llama.attention.value_length = 2: value heads would have another width than the key heads' 4, which attnviz does not "
             "apply for architecture llama");
  // Neutral values change nothing and are read; so are the keys llama.cpp writes for llama.
  for (const auto& extra : std::vector<std::function<void(GgufBytes&)>>{
           uint32_key("llama.attention.sliding_window", 0), bool_key("llama.attention.causal", true), float_key("llama.logit_scale", 1),
           uint32_key("llama.expert_count", 0), uint32_key("llama.attention.value_length", 4), uint32_key("llama.vocab_size", 4),
           uint32_key("llama.context_length", 2048)}) {
    const GgufFile file(llama_gguf(dir, 1, extra));
    CHECK(decoder_config_from_gguf(file).warnings.empty());
  }
  const GgufFile unknown(llama_gguf(dir, 2, [&](GgufBytes& g) {
    uint32_key("llama.future_knob", 3)(g);
    float_key("llama.rope.scaling.yarn_log_multiplier", 0.1f)(g);
  }));
  CHECK(decoder_config_from_gguf(unknown).warnings ==
        std::vector<std::string>{dir.file("m.gguf") + ": metadata attnviz does not know for architecture llama, ignored: "
                                 "llama.future_knob, llama.rope.scaling.yarn_log_multiplier"});
  CHECK(decoder_config_from_gguf(GgufFile(data_file("stories260k/stories260K.gguf"))).warnings.empty());
  for (const std::string type : {"BF16", "F16", "Q8_0", "Q4_0", "Q4_K_M"})
    CHECK(decoder_config_from_gguf(GgufFile(attnviz::test::test_data_file("stories260k/quantized/stories260K-" + type + ".gguf")))
              .warnings.empty());
}

namespace {

// One string metadata entry.
std::function<void(GgufBytes&)> string_key(const std::string& key, const std::string& value) {
  return [key, value](GgufBytes& g) { g.str(key).put<std::uint32_t>(8).str(value); };
}

// The linear factor decoder_config_from_gguf applies for these metadata entries, with the dump's words.
std::pair<double, std::string> applied_scaling(const TempDir& dir, const std::vector<std::function<void(GgufBytes&)>>& keys) {
  const DecoderConfig c = decoder_config_from_gguf(GgufFile(llama_gguf(dir, keys.size(), [&](GgufBytes& g) {
    for (const auto& key : keys) key(g);
  })));
  return {c.rope.linear_factor, c.rope_scaling};
}

}  // namespace

// Found by a hostile tester: attnviz read the scaling unlike llama.cpp (llama-model.cpp
// load_hparams: type defaults to "linear", factor from rope.scaling.factor else rope.scale_linear,
// 0 = unscaled; llama-context.cpp: type "none" never scales).
TEST_CASE("GGUF decoder: RoPE linear scaling follows llama.cpp's keys, defaults and type none", "[gguf][rope]") {
  TempDir dir;
  using Keys = std::vector<std::function<void(GgufBytes&)>>;
  const auto type = [](const std::string& t) { return string_key("llama.rope.scaling.type", t); };
  const auto factor = [](float f) { return float_key("llama.rope.scaling.factor", f); };
  const auto old_factor = [](float f) { return float_key("llama.rope.scale_linear", f); };
  const std::vector<std::tuple<std::string, Keys, double>> cases = {
      {"nothing", {}, 1.0},
      {"factor 4 without a type (linear by default)", {factor(4)}, 4.0},
      {"scale_linear 4 without a type", {old_factor(4)}, 4.0},
      {"type none + scale_linear 4", {type("none"), old_factor(4)}, 1.0},
      {"type none + factor 4", {type("none"), factor(4)}, 1.0},
      {"type linear + scale_linear 4", {type("linear"), old_factor(4)}, 4.0},
      {"type linear + factor 2.5", {type("linear"), factor(2.5f)}, 2.5},
      {"type linear without a factor", {type("linear")}, 1.0},
      {"type linear + factor 0 (unscaled)", {type("linear"), factor(0)}, 1.0},
      {"factor wins over scale_linear", {factor(2), old_factor(8)}, 2.0},
      {"factor 0 is read, not skipped for scale_linear", {factor(0), old_factor(8)}, 1.0},
  };
  for (const auto& [what, keys, expected] : cases) {
    CAPTURE(what);
    const auto [applied, words] = applied_scaling(dir, keys);
    CHECK(applied == expected);
    CHECK(words == (expected == 1.0 ? "none" : "linear x" + std::to_string(expected)));
  }
  const std::string at = dir.file("m.gguf") + ": ";
  for (const std::string kind : {"yarn", "longrope", "Linear"})
    CHECK(config_error(llama_gguf(dir, 2, [&](GgufBytes& g) { type(kind)(g); factor(4)(g); })) ==
          at + "llama.rope.scaling.type \"" + kind + "\" is not supported (none, linear)");
  CHECK(config_error(llama_gguf(dir, 2, [&](GgufBytes& g) { type("none")(g); factor(-4)(g); })) ==
        at + "llama.rope.scaling.factor: expected a finite number > 0, got -4");
}

// Issue 25, bad input: llama.cpp reads Gemma's sliding_window_pattern as an integer period for
// gemma2 and gemma3; a per-layer list (of any length) is refused naming the file and the key.
TEST_CASE("families: a GGUF window pattern given as a per-layer list is refused naming the file and key", "[model][families][errors]") {
  constexpr std::uint32_t kUint32 = 4, kBool = 7, kString = 8, kArray = 9;  // GGUF value types
  TempDir dir;
  for (const std::string arch : {"gemma2", "gemma3"}) {
    INFO(arch);
    GgufBytes g;
    g.header(3, 1, 7).str("general.architecture").put(kString).str(arch);
    for (const auto& [key, value] : std::vector<std::pair<std::string, std::uint32_t>>{{".block_count", 2},
                                                                                      {".embedding_length", 8},
                                                                                      {".attention.head_count", 2},
                                                                                      {".feed_forward_length", 16},
                                                                                      {".attention.sliding_window", 4}})
      g.str(arch + key).put(kUint32).put(value);
    g.str(arch + ".attention.sliding_window_pattern").put(kArray).put(kBool).put<std::uint64_t>(3);
    g.put<std::uint8_t>(1).put<std::uint8_t>(0).put<std::uint8_t>(1);
    g.tensor("token_embd.weight", {8, 4}, 0, 0).pad_to(32);
    g.bytes.append(8 * 4 * sizeof(float), '\0');
    const std::string path = g.write(dir);
    CHECK(config_error(path) == path + ": metadata " + arch + ".attention.sliding_window_pattern is a list of per-layer flags, which "
                                       "llama.cpp does not apply to this architecture and attnviz does not either (an integer period is read)");
  }
}
