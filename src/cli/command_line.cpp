#include "cli/command_line.hpp"

#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <memory>
#include <optional>
#include <utility>
#include <stdexcept>
#include <string>
#include <string_view>
#include <tuple>
#include <vector>

#include "cli/suggestion.hpp"
#include "cli/text_input.hpp"
#include "model/model_run.hpp"
#include "render/colormap.hpp"

namespace attnviz {

namespace {

constexpr int kMaxImageSidePx = 16384;
// Below this, titles, labels and the colour bar leave no room for cells.
constexpr int kMinImageSidePx = 256;
constexpr int kMaxHeadNumber = 1 << 20;

// A finite number > 0 (CLI11's PositiveNumber accepts nan and prints a 300-digit bound).
const CLI::Validator kPositive(
    [](std::string& text) -> std::string {
      try {
        std::size_t used = 0;
        const double value = std::stod(text, &used);
        if (used == text.size() && std::isfinite(value) && value > 0) return {};
      } catch (const std::exception&) {
      }
      return "expected a positive number, got \"" + text + "\"";
    },
    "POSITIVE");

// Text that is UTF-8 (a tokenizer splits characters, and Hugging Face's refuses other bytes):
// invalid bytes are named with their offset rather than tokenized as stray byte tokens.
const CLI::Validator kUtf8Text(
    [](std::string& text) -> std::string { return utf8_problem(text); },
    "UTF-8");

// A number from 0 to 1 (CLI11's Range prints "0.000000 to 1.000000").
const CLI::Validator kUnitInterval(
    [](std::string& text) -> std::string {
      try {
        std::size_t used = 0;
        const double value = std::stod(text, &used);
        if (used == text.size() && value >= 0 && value <= 1) return {};
      } catch (const std::exception&) {
      }
      return "expected a number from 0 to 1, got \"" + text + "\"";
    },
    "0..1");

// "0,3,5": whole numbers from 0, each once (CLI11's own int parsing accepts "0x1" and ""); a head
// may be written "H3", as the pictures title the heads of a layer without a number.
std::vector<int> parse_heads(const std::string& text) {
  std::vector<int> heads;
  std::size_t start = 0;
  while (start <= text.size()) {
    const std::size_t comma = std::min(text.find(',', start), text.size());
    const std::string written = text.substr(start, comma - start);
    const std::string item = written.size() > 1 && written[0] == 'H' ? written.substr(1) : written;
    const bool digits = !item.empty() && item.size() <= 7 &&
                        std::all_of(item.begin(), item.end(), [](char c) { return c >= '0' && c <= '9'; });
    if (!digits || std::stoi(item) > kMaxHeadNumber) {
      throw CLI::ValidationError("--heads", "expected head numbers from 0 separated by commas, e.g. 0,3,5, or heads named "
                                            "as the pictures name them (H3, or L0H3 with the run's layer); got \"" + text + "\"");
    }
    const int head = std::stoi(item);
    if (std::find(heads.begin(), heads.end(), head) != heads.end()) {
      throw CLI::ValidationError("--heads", "head " + item + " is named twice in \"" + text + "\"");
    }
    heads.push_back(head);
    start = comma + 1;
  }
  return heads;
}

// "L0H3,L4H1": heads of a whole model, each once; an encoder-decoder's name their block too
// ("enc.L0H3", "dec.L0H3", "cross.L0H3"). Whether the model wants block names is known only
// when it runs (model_compare_job checks that).
std::vector<LayerHead> parse_layer_heads(const std::string& text) {
  std::vector<LayerHead> heads;
  std::size_t start = 0;
  while (start <= text.size()) {
    const std::size_t comma = std::min(text.find(',', start), text.size());
    const std::string item = text.substr(start, comma - start);
    const std::size_t dot = item.find('.');
    LayerHead named;
    if (dot != std::string::npos) named.block = item.substr(0, dot);
    const std::string head = dot == std::string::npos ? item : item.substr(dot + 1);
    const bool known_block = named.block.empty() || std::any_of(block_names().begin(), block_names().end(),
                                                                [&](const BlockName& b) { return named.block == b.name; });
    int used = 0;
    if (!known_block || (dot != std::string::npos && named.block.empty()) ||
        std::sscanf(head.c_str(), "L%7dH%7d%n", &named.layer, &named.head, &used) != 2 ||
        used != static_cast<int>(head.size()) || named.layer < 0 || named.head < 0 ||
        head.find_first_of("+- ") != std::string::npos) {
      throw CLI::ValidationError("--heads", "expected heads named L<layer>H<head> separated by commas, e.g. L0H3,L4H1 "
                                            "(encoder-decoder models: enc.L0H3, dec.L0H3 or cross.L0H3); got \"" +
                                                text + "\"");
    }
    if (std::find(heads.begin(), heads.end(), named) != heads.end()) {
      throw CLI::ValidationError("--heads", item + " is named twice in \"" + text + "\"");
    }
    heads.push_back(named);
    start = comma + 1;
  }
  return heads;
}

// "1,403,407": token ids ≥ 0 (or, for --token-types, segments: "0,0,1").
std::vector<int> parse_token_ids(const std::string& text, const std::string& option = "--token-ids",
                                 const std::string& example = "1,403,407") {
  std::vector<int> ids;
  std::size_t start = 0;
  while (start <= text.size()) {
    const std::size_t comma = std::min(text.find(',', start), text.size());
    const std::string item = text.substr(start, comma - start);
    const bool digits = !item.empty() && item.size() <= 9 &&
                        std::all_of(item.begin(), item.end(), [](char c) { return c >= '0' && c <= '9'; });
    if (!digits) {
      const std::string what = option == "--token-ids" ? "token ids" : "token types";
      throw CLI::ValidationError(option, "expected " + what + " from 0 separated by commas, e.g. " + example + "; got \"" + text + "\"");
    }
    ids.push_back(std::stoi(item));
    start = comma + 1;
  }
  return ids;
}

// A first word that is no subcommand. Exit code 109, CLI11's code for an unexpected argument.
class UnknownCommandError : public CLI::ParseError {
 public:
  explicit UnknownCommandError(std::string message)
      : CLI::ParseError("UnknownCommand", std::move(message), CLI::ExitCodes::ExtrasError) {}
};

// An option CLI11 would have misread (a "-h..." bundle taken for help), with the whole message
// already built. Exit code 109, as for every unknown option.
class UnknownOptionError : public CLI::ParseError {
 public:
  explicit UnknownOptionError(std::string message)
      : CLI::ParseError("UnknownOption", std::move(message), CLI::ExitCodes::ExtrasError) {}
};

// A switch given a value ("--causal=false"), with the whole message already built. Exit code
// 114, CLI11's for a flag given a value under disable_flag_override.
class SwitchValueError : public CLI::ParseError {
 public:
  explicit SwitchValueError(std::string message)
      : CLI::ParseError("SwitchValue", std::move(message), CLI::ExitCodes::ArgumentMismatch) {}
};

// CLI11's wording for "--causal=false" under disable_flag_override ("causal was given a
// disallowed flag override"), whose name lacks its dashes.
constexpr std::string_view kFlagOverrideSuffix = " was given a disallowed flag override";

// CLI11's help, without the hidden COMMAND positional, which its usage line would print as "[]".
class HelpFormatter : public CLI::Formatter {
 public:
  std::string make_usage(const CLI::App* app, std::string name) const override {
    std::string usage = CLI::Formatter::make_usage(app, std::move(name));
    const std::size_t hidden = usage.find(" []");
    if (hidden != std::string::npos) usage.erase(hidden, 3);
    return usage;
  }
};

// Every subcommand of `app`, whether given or not (CLI11's get_subcommands() alone lists the
// ones given).
std::vector<const CLI::App*> all_commands(const CLI::App& app) {
  return app.get_subcommands([](const CLI::App*) { return true; });
}

// The subcommands' names, for messages and suggestions.
std::vector<std::string> command_names(const CLI::App& app) {
  std::vector<std::string> names;
  for (const CLI::App* sub : all_commands(app)) names.push_back(sub->get_name());
  return names;
}

std::string joined(const std::vector<std::string>& items, const std::string& last_separator) {
  std::string text;
  for (std::size_t i = 0; i < items.size(); ++i)
    text += (i == 0 ? "" : i + 1 == items.size() ? last_separator : ", ") + items[i];
  return text;
}

// The first argument CLI11 left over that looks like an option ("--modle=x" as "--modle"), or "".
std::string first_unknown_option(const CLI::App& app) {
  for (const std::string& arg : app.remaining(false))
    if (arg.size() > 1 && arg[0] == '-') return arg.substr(0, arg.find('='));
  return "";
}

// The option whose value `word` (taken for the command) most likely is: the first argument
// left over, when it is an option and no value follows it there ("attnviz -o out/x" leaves
// only "-o"; "attnviz plot -o out/x" leaves "-o out/x"), or "". CLI11 keeps no order between
// the command word and the left-overs, so this reads their shape.
std::string option_taking(const CLI::App& app) {
  const std::vector<std::string> left = app.remaining(false);
  if (left.empty() || left[0].size() < 2 || left[0][0] != '-') return "";
  if (left.size() > 1 && left[1][0] != '-') return "";
  return left[0].substr(0, left[0].find('='));
}

// "attnviz -o out/x": options belong to a command, after its name.
std::string option_before_command(const CLI::App& app, const std::string& given) {
  const std::string option = given.substr(0, given.find(' '));
  return "option \"" + option + "\" comes before any command; name the command first: attnviz COMMAND " + given +
         " (commands: " + joined(command_names(app), ", ") + ")";
}

// A first word that is no subcommand ("heatmap", "help"): CLI11 alone would answer "A
// subcommand is required". An option before it ("attnviz -o out/x") is the likelier mistake,
// unless the word is near a command: the word is then that option's value.
[[noreturn]] void unknown_command(const CLI::App& app, const std::string& word) {
  const std::vector<std::string> commands = command_names(app);
  const std::optional<std::string> nearest = nearest_name(word, commands);
  const std::string option = option_taking(app);
  if (!nearest && !option.empty()) throw UnknownCommandError(option_before_command(app, option + " " + word));
  std::string message = "unknown command \"" + word + "\"";
  if (word == "help") {
    message += ": for help run attnviz --help, or attnviz COMMAND --help";
  } else if (nearest) {
    message += "; did you mean \"" + *nearest + "\"?";
  }
  throw UnknownCommandError(message + " (commands: " + joined(commands, ", ") + ")");
}

// Every name of `command`'s options ("--model", "-o", "--output"), in --help order.
std::vector<std::string> option_names(const CLI::App& command) {
  std::vector<std::string> names;
  for (const CLI::Option* opt : command.get_options()) {
    for (const std::string& s : opt->get_snames()) names.push_back("-" + s);
    for (const std::string& l : opt->get_lnames()) names.push_back("--" + l);
  }
  return names;
}

// What users of llama.cpp's tools (llama-cli, llama-server) and of transformers' generate()
// type for an option attnviz spells otherwise: "--prompt" is --text, not the nearest spelling
// ("--rope"). The option meant, when `command` has it.
std::optional<std::string> other_tools_name(const CLI::App& command, const std::string& option) {
  static const std::pair<const char*, const char*> kNames[] = {
      {"--prompt", "--text"},         {"--file", "--text-file"},         {"--prompt-file", "--text-file"},
      {"-n", "--generate"},           {"--n-predict", "--generate"},     {"--max-new-tokens", "--generate"},
      {"-c", "--max-tokens"},         {"--ctx-size", "--max-tokens"},    {"--model-path", "--model"},
      {"--no-special", "--no-parse-special"},
  };
  const std::vector<std::string> names = option_names(command);
  for (const auto& [theirs, ours] : kNames)
    if (option == theirs && std::find(names.begin(), names.end(), ours) != names.end()) return std::string(ours);
  return std::nullopt;
}

// "COMMAND: unknown option "--modle"; did you mean "--model"? (see attnviz COMMAND --help)":
// the nearest of the command's own options, or the commands that have it.
std::string unknown_option(const CLI::App& app, const CLI::App& command, const std::string& option) {
  std::string message = command.get_name() + ": unknown option \"" + option + "\"";
  if (const std::optional<std::string> meant = other_tools_name(command, option)) {
    message += "; did you mean \"" + *meant + "\"?";
  } else if (const std::optional<std::string> nearest = nearest_name(option, option_names(command))) {
    message += "; did you mean \"" + *nearest + "\"?";
  } else {
    std::vector<std::string> owners;
    for (const CLI::App* sub : all_commands(app)) {
      const std::vector<std::string> names = option_names(*sub);
      if (sub != &command && std::find(names.begin(), names.end(), option) != names.end()) owners.push_back(sub->get_name());
    }
    if (!owners.empty()) message += ": it is an option of " + joined(owners, " and ");
  }
  return message + " (see attnviz " + command.get_name() + " --help)";
}

// CLI11's "The following argument was not expected: --modle", with the option meant. Before
// any command, the option is out of place whatever it is.
std::string unexpected_argument(const CLI::App& app, const CLI::Error& e) {
  const std::vector<CLI::App*> given = app.get_subcommands();
  const CLI::App& command = given.empty() ? app : *given.front();
  const std::string option = first_unknown_option(command);
  if (option.empty()) return e.what();
  if (given.empty()) return option_before_command(app, option + " ...");
  return unknown_option(app, command, option);
}

// "--causal=false": a switch is on when named and off when not; a value (which CLI11 would
// read as "off", leaving a weights file's "causal": true in force) is refused.
std::string switch_with_value(const std::string& command, const std::string& name) {
  const std::string option = (name.size() == 1 ? "-" : "--") + name;
  std::string line = (command.empty() ? "" : command + ": ") + "the switch " + option +
                     " takes no value: name it to turn it on, leave it out to leave it off";
  if (name == "causal") line += " (--no-causal turns a weights file's \"causal\": true off)";
  return line + " (see attnviz " + (command.empty() ? "" : command + " ") + "--help)";
}

// One line, like every other attnviz error (an unknown command's message already says where
// help is). An unknown option is named before CLI11's "A subcommand is required" (attnviz
// --modle): the option is the mistake.
std::string failure_line(const CLI::App* app, const CLI::Error& e) {
  const std::string what = e.what();
  const std::string name = e.get_name();
  if (name == "UnknownCommand" || name == "UnknownOption" || name == "SwitchValue") return "attnviz: error: " + what + "\n";
  if (name == "ArgumentMismatch" && what.size() > kFlagOverrideSuffix.size() &&
      what.compare(what.size() - kFlagOverrideSuffix.size(), std::string::npos, kFlagOverrideSuffix) == 0) {
    const std::vector<CLI::App*> given = app->get_subcommands();
    const std::string flag = what.substr(0, what.size() - kFlagOverrideSuffix.size());
    return "attnviz: error: " + switch_with_value(given.empty() ? "" : given.front()->get_name(), flag) + "\n";
  }
  if (e.get_exit_code() == static_cast<int>(CLI::ExitCodes::ExtrasError) ||
      (app->get_subcommands().empty() && !first_unknown_option(*app).empty()))
    return "attnviz: error: " + unexpected_argument(*app, e) + "\n";
  return "attnviz: error: " + std::string(e.what()) + " (see attnviz --help, or attnviz COMMAND --help)\n";
}

void add_attention_inputs(CLI::App& sub, Options& o) {
  sub.add_option("SENTENCE", o.sentence,
                 "Sentence file (JSON): tokens, embeddings [n x d_model], optional attention_mask and "
                 "positions. Its queries are the rows of every matrix. Not with --model.");
  sub.add_option("WEIGHTS", o.weights,
                 "Weights file (JSON): num_heads, W_Q, W_K, W_V, optional biases, W_O, scale, rope. "
                 "Default: the sentence file itself (the bundled examples hold both).");
  sub.add_option("--source", o.source,
                 "Cross-attention: keys and values come from this sentence file (queries still come from "
                 "SENTENCE). Its attention_mask masks keys; its width may differ (W_K/W_V rows follow it).");
  CLI::Option* causal = sub.add_flag("--causal", o.causal,
                                     "Causal mask for self-attention: query i sees keys 0..i only. Default: the "
                                     "weights file's \"causal\", if any.");
  sub.add_flag("--no-causal", o.no_causal,
               "No causal mask, even where the weights file says \"causal\": true (to see a decoder layer's "
               "scores over every key).")
      ->excludes(causal);
  sub.add_option("--positional", o.positional,
                 "Add a position encoding to the embeddings before the projections: none (default) or "
                 "sinusoidal (Vaswani et al. 2017, section 3.5).")
      ->check(CLI::IsMember({"none", "sinusoidal"}));
  sub.add_option("--rope", o.rope,
                 "Rotary position embedding on Q and K: interleaved (pairs 2i,2i+1: GPT-J, llama2.c, GGUF), "
                 "half (pairs i,i+d/2: GPT-NeoX, Hugging Face LLaMA) or none. Default: the weights file's "
                 "rope block, if any.")
      ->check(CLI::IsMember({"interleaved", "half", "none"}));
  sub.add_option("--rope-theta", o.rope_theta, "RoPE base theta (default 10000, or the weights file's).")
      ->check(kPositive);
  sub.add_option("--rope-dim", o.rope_dim,
                 "Rotate only the first N dimensions of each head (partial rotary; even, <= d_k). Default d_k.")
      ->check(CLI::Range(2L, 1L << 20));
}

// --chat, --chat-role, --messages and --add-generation-prompt (issue 34): a conversation rendered
// through the model's own chat template, then tokenized with its special tokens.
void add_chat_options(CLI::App& sub, Options& o) {
  sub.add_option_function<std::string>(
         "--chat", [&o](const std::string& text) { o.chat_turns.emplace_back("user", text); },
         "A user message, rendered through the model's chat template (GGUF tokenizer.chat_template, or the "
         "folder's chat_template.jinja / tokenizer_config.json) with its bos/eos tokens, then tokenized with "
         "special tokens parsed. Repeatable; turns keep the order given.")
      ->check(kUtf8Text)
      ->trigger_on_parse()
      ->multi_option_policy(CLI::MultiOptionPolicy::TakeAll);
  sub.add_option_function<std::string>(
         "--chat-role",
         [&o](const std::string& turn) {
           const auto equals = turn.find('=');
           if (equals == std::string::npos || equals == 0) {
             throw CLI::ValidationError("--chat-role", "expected ROLE=TEXT (system=..., user=..., assistant=...), got \"" + turn + "\"");
           }
           o.chat_turns.emplace_back(turn.substr(0, equals), turn.substr(equals + 1));
         },
         "A turn ROLE=TEXT of the conversation (system=You are terse., assistant=Hello!), in order with --chat. Repeatable.")
      ->check(kUtf8Text)
      ->trigger_on_parse()
      ->multi_option_policy(CLI::MultiOptionPolicy::TakeAll);
  sub.add_option("--messages", o.messages_file,
                 "A JSON file of the conversation in OpenAI's form, [{\"role\": \"user\", \"content\": \"...\"}, ...], "
                 "rendered through the model's chat template (other members, such as content as a list of parts, reach "
                 "the template as they are).");
  sub.add_flag("--add-generation-prompt,!--no-add-generation-prompt", o.add_generation_prompt,
               "With --chat/--messages: end the prompt with the assistant's turn header, as for a reply (on by default; "
               "--no-add-generation-prompt renders the conversation alone).");
}

// --no-parse-special (tokenize(): llama_tokenize's parse_special off).
void add_parse_special_option(CLI::App& sub, Options& o, const std::string& what) {
  sub.add_flag("--no-parse-special", o.no_parse_special,
               "Read special tokens written in " + what + " (<|im_start|>, <s>, <|endoftext|>) as plain text. By default "
               "they are those tokens, as llama.cpp reads a prompt (GGUF: control, user-defined and unknown tokens; "
               "tokenizer.json: its added tokens, as the tokenizers library does). Without it a GGUF's user-defined "
               "tokens, and a tokenizer.json's added tokens that are not special, are still matched.");
}

// Where a text comes from besides --text: a file or standard input (text_input.hpp), as llama.cpp's -f.
void add_text_file_option(CLI::App& sub, Options& o) {
  sub.add_option("-f,--text-file", o.text_file,
                 "Read the text from FILE (UTF-8; - reads standard input), as llama.cpp's -f: one final newline is dropped, "
                 "the rest kept as it is. Instead of --text.");
}

// --tokenizer FILE: a tokenizer for a model folder that ships none.
void add_tokenizer_option(CLI::App& sub, Options& o) {
  sub.add_option("--tokenizer", o.tokenizer,
                 "The tokenizer to split the text with instead of the model's own: a tokenizer.json, or a GGUF file whose "
                 "vocabulary to use (for a Hugging Face folder that ships no tokenizer.json). Refused when its ids do not "
                 "fit the model's token embeddings.");
}

// --heads of heatmaps and render: head numbers, drawn in every layer. A whole model's heads
// named L<layer>H<head> belong to compare, which sets them side by side; heatmaps --model
// chooses its layers with --layers.
void add_drawn_heads_option(CLI::App& sub, Options& o, bool runs_models) {
  const std::string layers = runs_models ? "; choose the layers with --layers" : "";
  sub.add_option_function<std::string>(
      "--heads",
      [&o, layers](const std::string& text) {
        if (text.find('L') != std::string::npos)
          throw CLI::ValidationError("--heads", "takes head numbers, drawn in every layer (0,3 or H0,H3)" + layers +
                                                    " (compare --heads takes L<layer>H<head>); got \"" + text + "\"");
        o.heads = parse_heads(text);
      },
      std::string("Only these heads, numbered from 0, e.g. 0,3,5 (or H0,H3,H5): their head_<h> pictures and a grid of "
                  "them alone, in the order given") +
          (runs_models ? " (with --model, in every layer drawn)" : " (of every layer a model dump holds)") + "; default: all.");
}

// --max-tokens N for a command that runs one text.
void add_max_tokens_option(CLI::App& sub, Options& o) {
  sub.add_option("--max-tokens", o.max_tokens,
                 "With --model: keep only the last N tokens of the input (BOS, when added, stays first), for a text "
                 "longer than the model's context or than you want to see.")
      ->check(CLI::Range(1L, 1L << 30));
}

void add_model_options(CLI::App& sub, Options& o) {
  sub.add_option("-m,--model", o.model,
                 "Run a whole model instead of one layer: a GGUF file (llama.cpp's format), a Hugging Face "
                 "folder (config.json + model.safetensors; Llama, Mistral, Qwen 2/3, Gemma 2/3, Phi-3, GPT-2, BERT), or a CTranslate2 model folder "
                 "(model.bin + vocabularies). Every layer's attention is computed from the model's real "
                 "forward pass.");
  sub.add_option("-p,--text", o.text,
                 "With --model: the text to run (UTF-8), tokenized as the model file says; BOS is added when "
                 "the file asks for it; - reads it from standard input. For CTranslate2 character-level models: the "
                 "source text.")
      ->check(kUtf8Text);
  add_chat_options(sub, o);
  add_text_file_option(sub, o);
  sub.add_option_function<std::string>(
      "--token-ids", [&o](const std::string& text) { o.token_ids = parse_token_ids(text); },
      "With --model: token ids to run, used exactly as given (no BOS added), e.g. 1,403,407.");
  sub.add_option_function<std::string>(
      "--token-types", [&o](const std::string& text) { o.token_types = parse_token_ids(text, "--token-types", "0,0,0,1,1"); },
      "With --model, encoders (BERT): the segment of each token, e.g. 0,0,0,1,1 (default: all 0, segment A).");
  sub.add_flag("--no-bos", o.no_bos, "With --text: do not add BOS (or CLS/SEP).");
  add_parse_special_option(sub, o, "--text");
  add_tokenizer_option(sub, o);
  add_max_tokens_option(sub, o);
  sub.add_flag("--exact-matmul", o.exact_matmul,
               "With a GGUF --model: multiply the dequantized weights exactly in float32 instead of as llama.cpp does "
               "(activations rounded to the weight type's 8-bit blocks, float16 or bfloat16; the default, the dump's "
               "model.matmul says which per weight type).");
  sub.add_option("--generate", o.generate,
                 "With --model: continue the text greedily by N tokens (stopping at EOS) and show the attention "
                 "over prompt + continuation, as the model saw it when it wrote the last token. "
                 "CTranslate2: the most target tokens to decode (default 256).")
      ->check(CLI::Range(0, 1 << 20));
  sub.add_option("--layers", o.layers, "With --model: layers to show: all (default), 2, 0,3 or 1-4 (from 0).");
  sub.add_option("--source-tokens", o.source_tokens,
                 "CTranslate2 models: the source as space-separated tokens, as translate_batch takes them.")
      ->check(kUtf8Text);
  sub.add_option("--target-tokens", o.target_tokens,
                 "CTranslate2 models: force this translation (space-separated target tokens) instead of greedy "
                 "decoding, to see the attention the model would use for it.")
      ->check(kUtf8Text);
}

// Attention rollout of a whole model (docs/analysis.md "Attention rollout"). `source` says where the
// subcommand gets a whole model from: render takes no --model, only a model dump.
void add_rollout_options(CLI::App& sub, Options& o, const std::string& source) {
  CLI::Option* rollout = sub.add_flag("--rollout", o.rollout,
               source + ": attention rollout, R_l = Â_l ... Â_0 with Â = (1-a) mean_h(A) + a I, rows renormalised; " +
                   (sub.get_name() == "dump" ? "adds rollout [layer][query][key] to the dump." : "writes rollout.png."));
  sub.add_option("--rollout-residual", o.rollout_residual,
                 "The residual weight a of --rollout, from 0 to 1 (default 0.5, as Abnar & Zuidema 2020).")
      ->check(kUnitInterval)
      ->needs(rollout);  // alone it would be ignored in silence
}

// Value-weighted norms and ALTI (docs/analysis.md "What a head writes"); --flow only where a
// whole model runs (dump and heatmaps with --model).
// The help says only what this command does with them (issue 34: help texts copied between
// commands named flags and files the command has not): the dump's fields for dump, --rollout
// where the command has it.
void add_measure_options(CLI::App& sub, Options& o, bool flow) {
  const bool dump = sub.get_name() == "dump";
  const bool rollout = sub.get_option_no_throw("--rollout") != nullptr;
  sub.add_option("--measure", o.measure,
                 std::string("What the maps show: weights (default: the attention weights), norms (|| a f(x) ||, Kobayashi et al. "
                             "2020") + (dump ? ": dump adds norms, value_norms, layer_norms" : "") +
                     ") or alti (ALTI contributions with the residual, Ferrando et al. 2022" + (dump ? ": dump adds alti" : "") +
                     (rollout ? std::string(dump ? "; " : ": ") + "with --rollout also " + (dump ? "alti_rollout" : "its rollout") : "") +
                     ").")
      ->check(CLI::IsMember({"weights", "norms", "alti"}));
  if (!flow) return;
  sub.add_flag("--flow", o.flow,
               "With --model: attention flow (Abnar & Zuidema 2020): max-flow through the layers' 1/2 mean_h(A) + "
               "1/2 I; dump adds attention_flow [query][key], heatmaps write flow.png. At most 64 tokens.");
}

void add_resource_options(CLI::App& sub, Options& o) {
  sub.add_option("--threads", o.threads,
                 "Threads for the maths, for reading large matrices and for drawing the pictures (default: all "
                 "cores; 0 means the same).")
      ->check(CLI::Range(0, 1024));
  sub.add_flag("--profile", o.profile, "Print the time of each phase (load, compute, render, write) to stderr.");
  sub.add_option("--max-memory", o.max_memory_mib,
                 "Refuse, before allocating, a job estimated to need more than this many MiB "
                 "(default: half of physical memory).")
      ->check(kPositive);
}

// "resid_pre,z": hook points, each once; an unknown name is refused naming it and the valid ones.
std::vector<std::string> parse_activations(const std::string& text) {
  std::vector<std::string> names;
  std::size_t start = 0;
  while (start <= text.size()) {
    const std::size_t comma = std::min(text.find(',', start), text.size());
    const std::string item = text.substr(start, comma - start);
    if (std::find(kActivationNames.begin(), kActivationNames.end(), item) == kActivationNames.end())
      throw CLI::ValidationError("--activations", "unknown hook point \"" + item + "\" in \"" + text +
                                                      "\"; the hook points are resid_pre, resid_mid, resid_post, attn_out, "
                                                      "mlp_out and z, separated by commas");
    if (std::find(names.begin(), names.end(), item) != names.end())
      throw CLI::ValidationError("--activations", item + " is named twice in \"" + text + "\"");
    names.push_back(item);
    start = comma + 1;
  }
  return names;
}

// "png,svg,html": picture formats, each once, in any order.
std::vector<std::string> parse_formats(const std::string& text) {
  std::vector<std::string> formats;
  std::size_t start = 0;
  while (start <= text.size()) {
    const std::size_t comma = std::min(text.find(',', start), text.size());
    const std::string item = text.substr(start, comma - start);
    if (item != "png" && item != "svg" && item != "html") {
      throw CLI::ValidationError("--format", "expected png, svg or html separated by commas, e.g. png,html; got \"" +
                                                 text + "\"");
    }
    if (std::find(formats.begin(), formats.end(), item) != formats.end()) {
      throw CLI::ValidationError("--format", item + " is named twice in \"" + text + "\"");
    }
    formats.push_back(item);
    start = comma + 1;
  }
  return formats;
}

void add_format_option(CLI::App& sub, Options& o) {
  sub.add_option_function<std::string>(
      "--format", [&o](const std::string& text) { o.formats = parse_formats(text); },
      "Picture formats, comma-separated (default png): png, svg (vector pictures beside the PNGs: grid.svg, "
      "head_<h>.svg) and html (index.html: one self-contained interactive page, works offline).");
}

void add_picture_options(CLI::App& sub, Options& o) {
  sub.add_option("--cmap", o.cmap,
                 "Colour map (matplotlib's tables): viridis (default), magma, inferno, plasma, cividis, "
                 "greys, blues, rdbu (diverging, for signed data).")
      ->check(CLI::IsMember(colormap_names()));
  sub.add_option("--scale", o.scale,
                 "Colour scale: fixed (default: 0 to 1, so heads are comparable), head (each head its own "
                 "min-max), shared or layer (one min-max over all heads of a picture, a layer's in a model run) "
                 "or log (log10 of the weights, 1e-4 to 1: long texts and attention sinks). The colour bar says "
                 "which. compare takes fixed or shared.")
      ->check(CLI::IsMember({"fixed", "head", "layer", "shared", "log"}));
  sub.add_flag("--exclude-sink", o.exclude_sink,
               "With --scale head, layer or shared: take the range without key 0 (the attention sink) and "
               "queries 0-3; key 0 is drawn clipped and marked. heatmaps and render only.");
  sub.add_option("--cols", o.cols, "Panels per row of the grid (default 0: near-square, 8 heads -> 2 x 4).")
      ->check(CLI::Range(0, 1024));
  sub.add_option("--max-size", o.max_size_px,
                 "Largest image side in pixels (default 4096); cells shrink, labels thin out and, for very "
                 "long inputs, each pixel shows the max over a block of cells. From 256 to 16384.")
      ->check(CLI::Range(kMinImageSidePx, kMaxImageSidePx));
  sub.add_flag("--annotate", o.annotate, "Print each weight (2 decimals) in its cell when cells are large enough.");
  // One value per --font (allow_extra_args(false)): "--font F.ttf SENTENCE" must not take
  // SENTENCE as a second font.
  sub.add_option("--font", o.fonts,
                 "TrueType/OpenType font for labels, one file per --font (repeatable: later fonts are fallbacks "
                 "for glyphs the first lacks). DejaVu Sans follows them; installed fonts that fontconfig finds "
                 "supply characters none of them has (CJK once fonts-noto-cjk is installed).")
      ->allow_extra_args(false);
  add_format_option(sub, o);
}

// `attribute` (issue 20 §3): which heads push a decoder towards a token. Out-of-range numbers
// and --target with --target-id are checked by the job against the model (exit 1, naming them).
void add_attribute_command(CLI::App& app, Options& o) {
  CLI::App* attribute = app.add_subcommand(
      "attribute", "Which heads push a model towards a token: each head's direct logit attribution and the "
                   "change in log p(target) when its output is zeroed, as attribution.json and two layer x head maps.");
  attribute->add_option("-m,--model", o.model,
                        "The model: a decoder-only GGUF file or Hugging Face folder, or a CTranslate2 encoder-decoder "
                        "folder (its decoder's next token is attributed).")
      ->required();
  attribute->add_option("-p,--text", o.text,
                        "The text to run (UTF-8), tokenized as the model file says; BOS added when the file asks; - reads "
                        "standard input.")
      ->check(kUtf8Text);
  add_chat_options(*attribute, o);
  add_text_file_option(*attribute, o);
  attribute->add_option_function<std::string>(
      "--token-ids", [&o](const std::string& text) { o.token_ids = parse_token_ids(text); },
      "Token ids to run, used exactly as given (no BOS added), e.g. 1,403,407.");
  attribute->add_flag("--no-bos", o.no_bos, "With --text: do not add BOS.");
  add_parse_special_option(*attribute, o, "--text and --target");
  add_tokenizer_option(*attribute, o);
  add_max_tokens_option(*attribute, o);
  // Encoder-decoder (CTranslate2) models: the source, and the decoder prefix whose next token is attributed.
  attribute->add_option("--source-tokens", o.source_tokens,
                        "CTranslate2 models: the source as space-separated tokens (--text: the source as characters).")
      ->check(kUtf8Text);
  attribute->add_option("--target-tokens", o.target_tokens,
                        "CTranslate2 models: the decoder's input after <s> (space-separated target tokens) instead of "
                        "the greedy translation.")
      ->check(kUtf8Text);
  attribute->add_option("--generate", o.generate, "CTranslate2 models: the most target tokens to decode (default 256).")
      ->check(CLI::Range(0, 1 << 20));
  attribute->add_option("--target", o.target,
                        "The token to attribute, as text tokenized exactly as written (no space added: \" He\" is not "
                        "\"He\"); it must be one token. Default: the model's top prediction at the position.")
      ->check(kUtf8Text);
  attribute->add_option("--target-id", o.target_id, "The token to attribute, by id (instead of --target).");
  attribute->add_option("--position", o.position,
                        "The position whose next-token logits are attributed, from 0 with BOS at 0 (default: the last); "
                        "CTranslate2: a decoder position, <s> at 0.");
  attribute->add_option("-o,--output", o.output,
                        "The folder to write attribution.json and attribution.png into (see docs/output-formats.md).")
      ->required();
  attribute->add_option("--max-size", o.max_size_px, "Largest image side in pixels (default 4096), from 256 to 16384.")
      ->check(CLI::Range(kMinImageSidePx, kMaxImageSidePx));
  attribute->add_option("--font", o.fonts, "TrueType/OpenType font for labels, one file per --font (repeatable).")
      ->allow_extra_args(false);
  attribute->add_option_function<std::string>(
      "--format", [&o](const std::string& text) { o.formats = parse_formats(text); },
      "Picture formats, comma-separated (default png): png (attribution.png), svg (attribution.svg, the same maps as "
      "vector graphics) and html (attribution.html: the maps as tables, each head's value on hover, and the top heads).");
  add_resource_options(*attribute, o);
  attribute->callback([&o] { o.command = Command::Attribute; });
}

// --rows (issue 23): with --generate, only the generated tokens' rows, each new token's attention
// over everything before it.
void add_rows_option(CLI::App& sub, Options& o) {
  const bool generates = sub.get_option_no_throw("--generate") != nullptr;  // render draws a dump: it runs no model
  sub.add_option("--rows", o.rows,
                 std::string("Query rows to draw: all (default) or generated (") +
                     (generates ? "with --generate N, or a dump of such a run" : "a dump of a run with generated tokens") +
                     ": only the N generated tokens' rows, positions P to P+N-1 after the P prompt tokens).")
      ->check(CLI::IsMember({"all", "generated"}));
}

// "K/N" of --shard: two integers; the range (0 <= K < N) is checked by the census itself.
std::pair<int, int> parse_shard(const std::string& text) {
  const std::size_t slash = text.find('/');
  try {
    std::size_t used_k = 0, used_n = 0;
    if (slash == std::string::npos) throw std::invalid_argument(text);
    const int k = std::stoi(text.substr(0, slash), &used_k);
    const int n = std::stoi(text.substr(slash + 1), &used_n);
    if (used_k != slash || used_n != text.size() - slash - 1) throw std::invalid_argument(text);
    return {k, n};
  } catch (const std::logic_error&) {
    throw CLI::ValidationError("--shard", "expected K/N, e.g. 0/4 (texts 0, 4, 8, ...), got \"" + text + "\"");
  }
}

// census --merge's folders: those it took itself (o.merge) and those given as positionals.
// Throws CLI::ValidationError for folders without --merge, or --merge without a folder.
void add_merge_folders(Options& o, bool merge_given, const std::vector<std::string>& positional) {
  std::string listed;
  for (const std::string& dir : positional) listed += (listed.empty() ? "" : " ") + dir;
  if (!merge_given && !positional.empty())
    throw CLI::ValidationError("census", "unexpected argument" + std::string(positional.size() == 1 ? " " : "s ") + listed +
                                             ": only --merge takes folders (census --merge DIR1 DIR2 ... -o OUT)");
  o.merge.erase(std::remove(o.merge.begin(), o.merge.end(), std::string()), o.merge.end());  // CLI11's "given, no value"
  o.merge.insert(o.merge.end(), positional.begin(), positional.end());
  if (merge_given && o.merge.empty())
    throw CLI::ValidationError("--merge", "needs the folders to combine (census --merge DIR1 DIR2 ... -o OUT)");
}

// `serve` (issue 36): the model loaded once, a page and an HTTP API (cli/serve_command).
void add_serve_command(CLI::App& app, Options& o) {
  CLI::App* serve = app.add_subcommand(
      "serve", "Load a decoder-only model once and serve a page to type texts into and see their heads (the report heatmaps "
               "writes as index.html), with an HTTP API: POST /api/run (the model dump), POST /api/tokenize, GET "
               "/api/health. Ctrl-C stops it after the runs in flight.");
  serve->add_option("-m,--model", o.model, "The model: a GGUF file or a Hugging Face folder (decoder-only), with its tokenizer.")
      ->required();
  serve->add_option("--host", o.host,
                    "The address to listen on (default 127.0.0.1, this machine only; any other is warned about: the API "
                    "has no authentication).");
  serve->add_option("--port", o.port, "The port (default 8765; 0: any free port, printed).")->check(CLI::Range(0, 65535));
  serve->add_option("--max-tokens", o.max_tokens,
                    "The most tokens one run may have, its text's and those to generate together (default 2048); more is "
                    "answered 413.")
      ->check(CLI::Range(1L, 1L << 20));
  serve->add_option("--queue", o.queue, "Runs that may wait while one runs (default 8); more are answered 503.")
      ->check(CLI::Range(0, 1024));
  serve->add_flag("--no-bos", o.no_bos, "Do not add the BOS token the tokenizer would put first.");
  serve->add_option("--threads", o.threads, "Threads for each run's maths (default: all cores).")->check(CLI::Range(0, 1024));
  serve->add_option("--max-memory", o.max_memory_mib,
                    "Answer 413, before allocating, a run estimated to need more than this many MiB (default: half of "
                    "physical memory).")
      ->check(kPositive);
  serve->callback([&o, serve] {
    o.command = Command::Serve;
    if (serve->count("--max-tokens") == 0) o.max_tokens = 2048;
  });
}

// `census` (issue 22): a model's head census over a corpus, sharded and merged.
void add_census_command(CLI::App& app, Options& o) {
  CLI::App* census = app.add_subcommand(
      "census", "Every head's statistics over a corpus (mean, std and 95% interval over texts): census.json, census.csv "
                "and census.png in -o DIR. Split the work with --shard K/N and combine the outputs with --merge.");
  census->add_option("-m,--model", o.model,
                     "The model: a GGUF file or a Hugging Face folder (decoder-only), or a CTranslate2 folder (each text a "
                     "source, translated greedily; encoder, decoder and cross-attention heads).");
  census->add_option("--corpus", o.corpus,
                     "The texts: JSONL when the name ends in .jsonl ({\"text\": \"...\"} or {\"token_ids\": [...]} per "
                     "line), else plain text, one text per line. Blank lines are skipped.");
  census->add_option("-o,--output", o.output, "The folder for census.json, census.csv, census.png and the journal texts.jsonl.")
      ->required();
  census->add_option("--corpus-format", o.corpus_format, "text or jsonl, whatever the name says.")
      ->check(CLI::IsMember({"text", "jsonl"}));
  census->add_flag("--skip-bad-lines", o.skip_bad_lines, "Skip (and count) corpus lines that are not a text, instead of stopping.");
  census->add_option("--limit", o.limit, "Take the first N texts only (counted after skipped lines).")->check(CLI::Range(1L, 1L << 40));
  census->add_option("--max-tokens", o.max_tokens, "Cut each text to N tokens (default: the model's context).")
      ->check(CLI::Range(1L, 1L << 30));
  census->add_flag("--no-truncate", o.no_truncate, "Refuse a text longer than --max-tokens / the context instead of cutting it.");
  census->add_option("--sink-epsilon", o.sink_epsilon,
                     "sink_rate's threshold: a head is a sink on a text when its first key's mean weight exceeds it "
                     "(default 0.3, Gu et al. 2025).")
      ->check(kUnitInterval);  // CLI11's Range lets nan through
  census->add_option_function<std::string>(
      "--shard", [&o](const std::string& text) { std::tie(o.shard_index, o.shard_count) = parse_shard(text); },
      "Run texts K, K+N, K+2N, ... only (K from 0), e.g. --shard $SLURM_ARRAY_TASK_ID/$SLURM_ARRAY_TASK_COUNT.");
  // At least one folder may not be demanded of --merge itself: CLI11 then takes the next word
  // whatever it is, and `--merge -o OUT DIR1 DIR2` merged "-o" and "OUT". The folders after
  // other options are positionals (merge_folders), joined to --merge's in the callback.
  CLI::Option* merge = census->add_option("--merge", o.merge, "Combine census outputs (shard or merged folders) into -o, exactly.")
                           ->expected(0, CLI::detail::expected_max_vector_size)
                           ->allow_extra_args(true);
  auto merge_folders = std::make_shared<std::vector<std::string>>();
  census->add_option("DIR", *merge_folders, "With --merge: the folders to combine, before or after -o (--merge -o OUT DIR1 DIR2 ...).");
  census->add_flag("--resume", o.resume,
                   "Continue the journal DIR/texts.jsonl of an interrupted run, skipping its texts; or extend a finished run "
                   "over more texts (a larger --limit). Without it, a finished census in -o is replaced (with a warning).");
  auto quiet = std::make_shared<bool>(false);
  census->add_flag("--quiet", *quiet, "No progress on stderr.");
  census->add_option("--layers", o.layers, "Layers to count: all (default), 2, 0,3 or 1-4 (from 0).");
  census->add_flag("--no-bos", o.no_bos, "Do not add BOS to the texts.");
  add_parse_special_option(*census, o, "the texts");
  add_tokenizer_option(*census, o);
  add_picture_options(*census, o);
  // census.png is one PNG, each statistic on its own min-max with the values printed: these
  // picture flags would change nothing, so they are not offered.
  for (const char* unused : {"--format", "--scale", "--annotate", "--exclude-sink"})
    census->remove_option(census->get_option(unused));
  // The grid's words (heads, cells, long inputs) are not census.png's: its panels are statistics.
  census->get_option("--cols")->description("Panels per row of census.png, one panel per statistic (default 0: 4 per row).");
  census->get_option("--max-size")->description("Largest side of census.png in pixels (default 4096), from 256 to 16384.");
  add_resource_options(*census, o);
  census->remove_option(census->get_option("--profile"));  // a census has no phases to time; progress shows its pace
  census->callback([&o, quiet, merge, merge_folders] {
    o.command = Command::Census;
    add_merge_folders(o, merge->count() > 0, *merge_folders);
    o.progress = *quiet ? "none" : isatty(STDERR_FILENO) == 1 ? "bar" : "lines";
  });
}

}  // namespace

void add_options(CLI::App& app, Options& o) {
  app.failure_message(failure_line);  // before the subcommands, which copy it
  app.formatter(std::make_shared<HelpFormatter>());
  app.require_subcommand(1);
  // Every switch refuses "=value" ("--causal=false" would read as "not given"); subcommands
  // copy these defaults when they are added, their help flags are made before and set below.
  app.option_defaults()->disable_flag_override();
  app.get_help_ptr()->disable_flag_override();
  app.set_version_flag("--version", std::string("attnviz ") + ATTNVIZ_VERSION);
  // Hidden (no group): catches a first word that is not a subcommand. CLI11 matches subcommand
  // names before positionals, so this sees only unknown words.
  CLI::App* top = &app;
  app.add_option_function<std::string>("COMMAND", [top](const std::string& word) { unknown_command(*top, word); })
      ->group("");

  CLI::App* dump = app.add_subcommand("dump", "Compute every head's attention weights and write them as JSON (one layer, or with --model every layer of "
              "a whole model).");
  add_attention_inputs(*dump, o);
  dump->add_option("-o,--output", o.output,
                   "The JSON file to write (attnviz.attention format, see docs/output-formats.md); - writes it to "
                   "standard output.")
      ->required();
  dump->add_flag("--scores", o.scores, "Also write the pre-softmax scaled logits (null where masked).");
  dump->add_flag("--outputs", o.outputs, "Also write each head's output rows and, with W_O, the layer output.");
  add_model_options(*dump, o);
  dump->add_flag("--logits", o.logits, "With --model: also write the last position's logits (n_vocab values).");
  add_rollout_options(*dump, o, "With --model");
  add_measure_options(*dump, o, true);
  dump->add_option("--format", o.dump_format,
                   "json or safetensors (float32 tensors named by TransformerLens's hook points, for numpy and PyTorch; "
                   "docs/output-formats.md). Default: safetensors when -o ends in .safetensors, else json.")
      ->check(CLI::IsMember({"json", "safetensors"}));
  dump->add_option_function<std::string>(
      "--activations", [&o](const std::string& text) { o.activations = parse_activations(text); },
      "With --model (decoders): also write these hook points of the selected layers, comma-separated: resid_pre, "
      "resid_mid, resid_post, attn_out, mlp_out ([position, d_model] each) and z (each head's output, as --outputs).");
  add_resource_options(*dump, o);
  dump->callback([&o] { o.command = Command::Dump; });

  CLI::App* heatmaps = app.add_subcommand(
      "heatmaps", "Compute every head and draw one labelled heatmap per head plus a grid of all heads (PNG); with --model, "
                  "for every layer of a whole model, with an overview of all layers.");
  add_attention_inputs(*heatmaps, o);
  heatmaps->add_option("-o,--output", o.output,
                       "The folder to write grid.png and head_<h>.png into (with --model: layer_<l>/ per layer).")
      ->required();
  add_model_options(*heatmaps, o);
  add_rollout_options(*heatmaps, o, "With --model");
  add_measure_options(*heatmaps, o, true);
  add_picture_options(*heatmaps, o);
  add_drawn_heads_option(*heatmaps, o, true);
  add_rows_option(*heatmaps, o);
  add_resource_options(*heatmaps, o);
  heatmaps->callback([&o] { o.command = Command::Heatmaps; });

  CLI::App* render = app.add_subcommand(
      "render", "Draw heatmaps from an attention JSON (a dump, or weights [head][query][key] with tokens).");
  render->add_option("ATTENTION", o.sentence, "The attention JSON to draw.")->required();
  render->add_option("-o,--output", o.output, "The folder to write grid.png and head_<h>.png into.")->required();
  add_rollout_options(*render, o, "With a model dump (a whole model's dump, as dump writes it from a model file)");
  add_measure_options(*render, o, false);
  add_picture_options(*render, o);
  add_drawn_heads_option(*render, o, false);
  add_rows_option(*render, o);
  add_resource_options(*render, o);
  render->callback([&o] { o.command = Command::Render; });

  CLI::App* compare = app.add_subcommand(
      "compare",
      "Chosen heads side by side on one colour scale, difference maps, and per-head statistics. Give SENTENCE "
      "[WEIGHTS] as for heatmaps, or two attention JSON files (e.g. two dumps) to compare runs.");
  add_attention_inputs(*compare, o);
  compare->add_option("-o,--output", o.output,
                      "The PNG file to write (with --format svg/html: .svg and .html beside it, same name).")
      ->required();
  add_model_options(*compare, o);
  compare->add_option_function<std::string>(
      "--heads",
      [&o](const std::string& text) {
        if (text.find('L') != std::string::npos) o.layer_heads = parse_layer_heads(text);
        else o.heads = parse_heads(text);
      },
      "Heads to compare, numbered from 0, e.g. 0,3,5, or named as the pictures name them, L0H3,L0H5 (the layer "
      "must be the runs' own); default: all. With --model, heads of any layers: L0H3,L4H1 "
      "(encoder-decoder models name the block: enc.L0H3 encoder, dec.L0H3 decoder self-, cross.L0H3 decoder "
      "cross-attention).");
  add_measure_options(*compare, o, false);
  compare->add_flag("--average", o.average, "Add the mean over the chosen heads (mean of probabilities), labelled.");
  compare->add_option("--stats", o.stats, "Also save the statistics as FILE.json or FILE.csv.");
  compare->add_option("--census", o.census,
                      "With --model: every (layer, head)'s statistics as FILE.csv or FILE.json; without --heads, -o "
                      "draws them as layer x head tables.");
  add_picture_options(*compare, o);
  // compare draws every head on one scale: a sink left out of a computed range is heatmaps' and render's.
  compare->remove_option(compare->get_option("--exclude-sink"));
  compare->get_option("--scale")->description(
      "Colour scale: fixed (default: 0 to 1) or shared (one min-max over every panel); the other scales are "
      "heatmaps' and render's.");
  compare->get_option("--cols")->description("Panels per row of the figure (default 0: near-square).");
  add_resource_options(*compare, o);
  compare->callback([&o] { o.command = Command::Compare; });

  CLI::App* explain = app.add_subcommand(
      "explain", "Inside one head at one query: the neuron view (query, keys, their products, scores, weights, values, "
                 "output) as explain.json and explain.png, and the head's QK/OV circuits beside its layer's other heads "
                 "(circuits.png).");
  add_attention_inputs(*explain, o);
  add_model_options(*explain, o);
  explain->remove_option(explain->get_option("--layers"));  // --head names the layer (L2H5)
  explain->add_option("--head", o.explain_head,
                      "The head to explain: H or H3 for a single layer; L2H5 with --model (cross.L2H5, enc.L2H5, dec.L2H5 "
                      "for encoder-decoder models). From 0.")
      ->required();
  explain->add_option("--query", o.query, "The query token to explain, from 0 (default: the last).")
      ->check(CLI::Range(0L, 1L << 40));
  explain->add_option("-o,--output", o.output, "The folder to write explain.json, explain.png and circuits.png into.")
      ->required();
  // Not add_picture_options: explain's pictures have no colour map, scale, grid or cell values to choose.
  explain->add_option("--max-size", o.max_size_px,
                      "Largest image side in pixels (default 4096): key rows shrink and labels thin out for long texts. "
                      "From 256 to 16384.")
      ->check(CLI::Range(kMinImageSidePx, kMaxImageSidePx));
  explain->add_option("--font", o.fonts, "TrueType/OpenType font for labels, one file per --font (as for heatmaps).")
      ->allow_extra_args(false);
  explain->add_option_function<std::string>(
      "--format", [&o](const std::string& text) { o.formats = parse_formats(text); },
      "Picture formats, comma-separated (default png): png (explain.png, circuits.png), svg (explain.svg, circuits.svg) "
      "and html (explain.html: every query of the head, switched by clicking a query token).");
  add_resource_options(*explain, o);
  explain->callback([&o] { o.command = Command::Explain; });

  CLI::App* tokenize = app.add_subcommand(
      "tokenize", "Print how a model's tokenizer splits a text: one JSON document {\"tokens\": [...], \"token_ids\": "
                  "[...], \"token_texts\": [...]}, or on a terminal a table, one line per token.");
  tokenize->add_option("-m,--model", o.model,
                       "The GGUF model (or vocabulary-only GGUF) file, or a Hugging Face folder with tokenizer.json.")
      ->required();
  tokenize->add_option("-p,--text", o.text,
                       "The text to split (UTF-8; - reads standard input); or give a conversation with --chat/--messages.")
      ->check(kUtf8Text);
  add_text_file_option(*tokenize, o);
  add_chat_options(*tokenize, o);
  tokenize->add_flag("--no-bos", o.no_bos, "Do not add BOS (or CLS/SEP).");
  add_parse_special_option(*tokenize, o, "--text");
  add_tokenizer_option(*tokenize, o);
  auto json = std::make_shared<bool>(false);
  tokenize->add_flag("--json", *json, "Print the JSON document even on a terminal (elsewhere it is all stdout holds).");
  tokenize->callback([&o, json] {
    o.command = Command::Tokenize;
    o.table = !*json && isatty(STDOUT_FILENO) == 1;  // a pipe (| jq .) gets JSON only
  });
  add_attribute_command(app, o);
  add_census_command(app, o);
  add_serve_command(app, o);
  for (CLI::App* sub : app.get_subcommands([](const CLI::App*) { return true; }))
    sub->get_help_ptr()->disable_flag_override();
}

namespace {

// Words CLI11 would misread, refused before it parses. "-output x.json": CLI11 reads -o with
// the value "utput" and runs; a single-dash word that is a long option's name of the command
// given (or of the top level, before one) is that option misspelt. "--causal=true": a switch
// given a value, which disable_flag_override lets through when it is "true". Help asked for by
// -h or --help wins.
void refuse_misread_words(const CLI::App& app, const std::vector<std::string>& args) {
  const auto end = std::find(args.begin(), args.end(), "--");
  if (std::find(args.begin(), end, "-h") != end || std::find(args.begin(), end, "--help") != end) return;  // help wins
  const CLI::App* command = nullptr;
  for (const std::string& arg : args) {
    if (arg == "--") return;
    if (command == nullptr) {
      for (const CLI::App* sub : all_commands(app))
        if (sub->get_name() == arg) command = sub;
    }
    const CLI::App& scope = command != nullptr ? *command : app;
    if (arg.rfind("--", 0) == 0 && arg.find('=') != std::string::npos) {
      // CLI11 takes "--causal=true" (only that value) under disable_flag_override: refused too,
      // so that a switch never has a value.
      const std::string long_name = arg.substr(2, arg.find('=') - 2);
      for (const CLI::Option* opt : scope.get_options())
        if (opt->check_lname(long_name) && opt->get_items_expected_max() == 0)
          throw SwitchValueError(switch_with_value(command != nullptr ? command->get_name() : "", long_name));
      continue;
    }
    if (arg.size() < 3 || arg[0] != '-' || arg[1] == '-') continue;
    const std::string name = arg.substr(1, arg.find('=') - 1);
    const std::vector<std::string> names = option_names(scope);
    if (std::find(names.begin(), names.end(), "--" + name) == names.end()) continue;
    throw UnknownOptionError((command != nullptr ? command->get_name() + ": " : std::string()) + "unknown option \"" +
                             arg.substr(0, arg.find('=')) + "\"; did you mean \"--" + name + "\"? (see attnviz " +
                             (command != nullptr ? command->get_name() + " " : std::string()) + "--help)");
  }
}

}  // namespace

void parse_arguments(CLI::App& app, std::vector<std::string> args) {
  refuse_misread_words(app, args);
  std::vector<std::string> reversed(args.rbegin(), args.rend());
  try {
    app.parse(reversed);
  } catch (const CLI::RequiredError&) {
    // CLI11 checks required options before left-over ones, so "--outptu x.json" said only
    // "--output is required": the misspelt option is the news, named first with the one meant.
    const std::vector<CLI::App*> given = app.get_subcommands();
    if (!given.empty()) {
      if (const std::string option = first_unknown_option(*given.front()); !option.empty())
        throw UnknownOptionError(unknown_option(app, *given.front(), option));
    }
    throw;
  } catch (const CLI::CallForHelp&) {
    // CLI11 splits "-heads" into -h and "-eads": help for a typo. Help only when asked alone.
    std::string bundle;
    for (const std::string& arg : args) {
      if (arg == "--") break;
      if (arg == "-h" || arg == "--help") throw;
      if (bundle.empty() && arg.size() > 2 && arg[0] == '-' && arg[1] == 'h') bundle = arg;
    }
    if (bundle.empty()) throw;
    const std::vector<CLI::App*> given = app.get_subcommands();
    if (!given.empty()) throw UnknownOptionError(unknown_option(app, *given.front(), bundle));
    std::string message = "unknown option \"" + bundle + "\"";
    if (const std::optional<std::string> nearest = nearest_name(bundle, option_names(app)))
      message += "; did you mean \"" + *nearest + "\"?";
    throw UnknownOptionError(message + " (see attnviz --help)");
  }
}

}  // namespace attnviz
