// cli/model_job: `tokenize` (one JSON document, or a table with a header on a terminal; GGUF
// files and Hugging Face folders) and the token labels of whole-model runs: byte-level BPE
// pieces ("Ġ", "ä½") are shown as their text, the dump keeping the pieces beside token_texts
// (issue 24, section 4). Small vocabularies and a tiny Hugging Face model are built here.
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>

#include "cli/run.hpp"
#include "model/tokenizers/tokenizer_bpe.hpp"
#include "support/run_support.hpp"
#include "support/test_support.hpp"

using namespace attnviz;
using attnviz::test::data_file;
using attnviz::test::run_with;
using attnviz::test::TempDir;
using Catch::Matchers::Contains;
using json = nlohmann::json;

namespace {

const std::string kE4 = gpt2_byte_piece(0xE4), kBD = gpt2_byte_piece(0xBD), kA0 = gpt2_byte_piece(0xA0),
                  kG = gpt2_byte_piece(' ');
constexpr int kEndOfText = 259;  // after the 256 byte pieces and the 3 merges' results

// A byte-level tokenizer.json (GPT-2's kind): the 256 byte pieces, three merges giving "ä½" (the
// bytes E4 BD of 你 = E4 BD A0), "Ġh" and "Ġhi", and <|endoftext|>.
json byte_level_tokenizer() {
  json vocab = json::object();
  for (int byte = 0; byte < 256; ++byte) vocab[gpt2_byte_piece(static_cast<unsigned char>(byte))] = byte;
  const std::vector<std::string> merges = {kE4 + " " + kBD, kG + " h", kG + "h i"};
  for (std::size_t i = 0; i < merges.size(); ++i) {
    const std::size_t space = merges[i].find(' ');
    vocab[merges[i].substr(0, space) + merges[i].substr(space + 1)] = 256 + i;
  }
  return {{"model", {{"type", "BPE"}, {"vocab", vocab}, {"merges", merges}}},
          {"pre_tokenizer", {{"type", "ByteLevel"}, {"add_prefix_space", false}, {"trim_offsets", true}, {"use_regex", true}}},
          {"added_tokens", json::array({{{"id", kEndOfText}, {"content", "<|endoftext|>"}, {"special", true}, {"single_word", false},
                                  {"lstrip", false}, {"rstrip", false}, {"normalized", false}}})},
          {"post_processor", {{"type", "ByteLevel"}, {"add_prefix_space", true}, {"trim_offsets", false}}},
          {"decoder", {{"type", "ByteLevel"}, {"add_prefix_space", true}, {"trim_offsets", true}}}};
}

// A one-layer LlamaForCausalLM (d_model 8, 2 heads, 260 tokens) with small made-up weights:
// config.json and model.safetensors in `dir`.
void write_tiny_llama(const TempDir& dir) {
  const long d = 8, ff = 16, vocab = kEndOfText + 1;
  std::ofstream(dir.file("config.json"))
      << json{{"architectures", {"LlamaForCausalLM"}}, {"model_type", "llama"}, {"hidden_size", d},
              {"num_attention_heads", 2}, {"num_hidden_layers", 1}, {"intermediate_size", ff}, {"vocab_size", vocab},
              {"tie_word_embeddings", true}, {"max_position_embeddings", 64}, {"rms_norm_eps", 1e-5}}
             .dump();
  const std::vector<std::pair<std::string, std::vector<long>>> tensors = {
      {"model.embed_tokens.weight", {vocab, d}}, {"model.norm.weight", {d}},
      {"model.layers.0.input_layernorm.weight", {d}}, {"model.layers.0.post_attention_layernorm.weight", {d}},
      {"model.layers.0.self_attn.q_proj.weight", {d, d}}, {"model.layers.0.self_attn.k_proj.weight", {d, d}},
      {"model.layers.0.self_attn.v_proj.weight", {d, d}}, {"model.layers.0.self_attn.o_proj.weight", {d, d}},
      {"model.layers.0.mlp.gate_proj.weight", {ff, d}}, {"model.layers.0.mlp.up_proj.weight", {ff, d}},
      {"model.layers.0.mlp.down_proj.weight", {d, ff}}};
  json header = json::object();
  std::vector<float> data;
  for (const auto& [name, shape] : tensors) {
    long count = 1;
    for (const long n : shape) count *= n;
    const std::size_t begin = data.size() * sizeof(float);
    for (long i = 0; i < count; ++i) data.push_back(shape.size() == 1 ? 1.0f : 0.05f * static_cast<float>((i * 37 + static_cast<long>(data.size())) % 17 - 8));
    header[name] = {{"dtype", "F32"}, {"shape", shape}, {"data_offsets", {begin, data.size() * sizeof(float)}}};
  }
  const std::string text = header.dump();
  const std::uint64_t length = text.size();
  std::ofstream out(dir.file("model.safetensors"), std::ios::binary);
  out.write(reinterpret_cast<const char*>(&length), sizeof length);
  out << text;
  out.write(reinterpret_cast<const char*>(data.data()), static_cast<std::streamsize>(data.size() * sizeof(float)));
}

Options tokenize_options(const std::string& model, const std::string& text) {
  Options options;
  options.command = Command::Tokenize;
  options.model = model;
  options.text = text;
  return options;
}

}  // namespace

// Bug: `attnviz tokenize … | jq .` failed: stdout was a JSON line followed by a table.
TEST_CASE("tokenize: stdout is one JSON document: the pieces, their ids and their texts", "[model][cli]") {
  const test::RunResult r = run_with(tokenize_options(data_file("stories260k/stories260K.gguf"), "Once upon a time"));
  REQUIRE(r.code == 0);
  CHECK(r.err.empty());
  CHECK(r.out.find('\n') == r.out.size() - 1);
  const json document = json::parse(r.out);  // throws on anything after the document
  CHECK(document["token_ids"] == json({1, 403, 407, 261, 378}));
  CHECK(document["tokens"][1] == "\xE2\x96\x81Once");
  CHECK(document["token_texts"] == json({"<s>", " Once", " upon", " a", " time"}));
}

TEST_CASE("tokenize: a terminal gets a table with a header row, one line per token", "[model][cli]") {
  Options options = tokenize_options(data_file("stories260k/stories260K.gguf"), "Once");
  options.table = true;
  const test::RunResult r = run_with(options);
  REQUIRE(r.code == 0);
  CHECK(r.out == "index\tid\tpiece\ttext\tkind\n"
                 "0\t1\t\"<s>\"\t\"<s>\"\tspecial\n"
                 "1\t403\t\"\xE2\x96\x81Once\"\t\" Once\"\t\n");
}

// Bug: tokenize refused a Hugging Face folder ("cannot read: not a regular file").
TEST_CASE("tokenize: a Hugging Face folder is read through its tokenizer.json", "[model][cli]") {
  TempDir dir;
  std::ofstream(dir.file("tokenizer.json")) << byte_level_tokenizer().dump();
  const test::RunResult r = run_with(tokenize_options(dir.path().string(), "\xE4\xBD\xA0 hi"));  // 你 hi
  INFO(r.err);
  REQUIRE(r.code == 0);
  const json document = json::parse(r.out);
  CHECK(document["token_ids"] == json({256, 0xA0, 258}));
  CHECK(document["tokens"] == json({kE4 + kBD, kA0, kG + "hi"}));
  CHECK(document["token_texts"] == json({"<0xE4><0xBD>", "<0xA0>", " hi"}));

  TempDir empty;
  const test::RunResult refused = run_with(tokenize_options(empty.path().string(), "a"));
  CHECK(refused.code == kExitInputError);
  CHECK(refused.err == "attnviz: error: " + empty.path().string() +
                           ": is a folder without a tokenizer.json; tokenize reads a GGUF file or a Hugging Face "
                           "folder's tokenizer.json\n");
  const test::RunResult translation = run_with(tokenize_options(test::data_file("aren-translit/model"), "a"));
  CHECK(translation.code == kExitInputError);
  CHECK_THAT(translation.err, Catch::Contains("model: is a CTranslate2 translation model: it has token lists, no tokenizer"));
}

// Bug: labels of GPT-2/Qwen-style vocabularies read "ä½" for 你 and "Ġ" for spaces.
TEST_CASE("model run: byte-level pieces are labelled with their text, the dump keeps the pieces", "[model][cli]") {
  TempDir model;
  write_tiny_llama(model);
  std::ofstream(model.file("tokenizer.json")) << byte_level_tokenizer().dump();
  TempDir out;
  Options options;
  options.command = Command::Dump;
  options.model = model.path().string();
  options.output = out.file("dump.json");
  json pieces = {kE4 + kBD, kA0, kG + "hi"}, texts = {"<0xE4><0xBD>", "<0xA0>", " hi"};
  SECTION("--token-ids, named by tokenizer.json") {
    options.token_ids = std::vector<int>{256, 0xA0, 258, kEndOfText};
    pieces.push_back("<|endoftext|>");
    texts.push_back("<|endoftext|>");
  }
  SECTION("--text, split by tokenizer.json") { options.text = "\xE4\xBD\xA0 hi"; }
  const test::RunResult r = run_with(options);
  INFO(r.err);
  REQUIRE(r.code == 0);
  const json dump = json::parse(test::read_file(options.output));
  CHECK(dump["tokens"] == pieces);
  CHECK(dump["token_texts"] == texts);
  CHECK(dump["layers"][0]["query_tokens"] == texts);
  CHECK(dump["layers"][0]["key_tokens"] == texts);
}

TEST_CASE("model run: without a tokenizer.json tokens are their ids and the dump has no token_texts", "[model][cli]") {
  TempDir model;
  write_tiny_llama(model);
  TempDir out;
  Options options;
  options.command = Command::Dump;
  options.model = model.path().string();
  options.output = out.file("dump.json");
  options.token_ids = std::vector<int>{5, 7};
  REQUIRE(run_with(options).code == 0);
  const json dump = json::parse(test::read_file(options.output));
  CHECK(dump["tokens"] == json({"5", "7"}));
  CHECK_FALSE(dump.contains("token_texts"));
  CHECK(dump["layers"][0]["query_tokens"] == json({"5", "7"}));
}

// issue 20 §3: a Hugging Face folder run by --token-ids reads --target with its tokenizer.json,
// exactly as written, and byte-level tokens are labelled with their text.
TEST_CASE("attribute: a Hugging Face folder's --target is read by its tokenizer.json, labelled by its text", "[model][cli][attribute]") {
  TempDir model;
  write_tiny_llama(model);
  std::ofstream(model.file("tokenizer.json")) << byte_level_tokenizer().dump();
  TempDir out;
  Options options;
  options.command = Command::Attribute;
  options.model = model.path().string();
  options.output = out.file("attribution");
  options.token_ids = std::vector<int>{256, 0xA0, 258};
  SECTION("\" hi\" with its space is one token") {
    options.target = " hi";
    const test::RunResult r = run_with(options);
    INFO(r.err);
    REQUIRE(r.code == 0);
    const json a = json::parse(test::read_file(out.file("attribution/attribution.json")));
    CHECK(a["target_id"] == 258);
    CHECK(a["target_token"] == " hi");
    CHECK(a["tokens"] == json({"<0xE4><0xBD>", "<0xA0>", " hi"}));
    CHECK(a["dla"].size() == 1);
    CHECK(a["dla"][0].size() == 2);
  }
  SECTION("\"hi\" without it is two") {
    options.target = "hi";
    const test::RunResult r = run_with(options);
    CHECK(r.code == kExitInputError);
    CHECK_THAT(r.err, Contains("--target: \"hi\" is 2 tokens, not one: \"h\" (104), \"i\" (105)"));
    CHECK(!std::filesystem::exists(out.file("attribution")));
  }
}
