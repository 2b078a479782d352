#include "census/census_journal_check.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <map>
#include <nlohmann/json.hpp>
#include <vector>

#include "census/census_check.hpp"
#include "core/error.hpp"

namespace attnviz {

namespace {

using Json = nlohmann::ordered_json;

std::string head_name(const std::string& stack, const std::string& kind, long long layer, long long head) {
  return CensusHead{stack, kind, static_cast<int>(layer), static_cast<int>(head)}.name();
}

// An integer member as a long long, or nullopt for another value (a fraction, a string, 2^64 − 1).
std::optional<long long> whole(const Json& value) {
  if (!value.is_number_integer() || (value.is_number_unsigned() && value.get<unsigned long long>() > 1ULL << 62)) return std::nullopt;
  return value.get<long long>();
}

// More heads than any model has (a run's line holds each): a header claiming more is refused
// before a set of that size is built.
constexpr long long kMaxHeads = 1 << 20;

}  // namespace

JournalLineChecker::JournalLineChecker(const std::string& path, const CensusProvenance& provenance) : path_(path) {
  // The header equals this run's, so these members are the run's own; read warily all the same
  // (the fuzzer hands it a header's).
  const Json model = Json::parse(provenance.model, nullptr, false), settings = Json::parse(provenance.settings, nullptr, false);
  const auto member = [](const Json& part, const char* key) { return part.is_object() && part.contains(key) ? part[key] : Json(); };
  const std::optional<long long> layers = whole(member(model, "layers")), heads = whole(member(model, "heads")),
                                 max_tokens = whole(member(settings, "max_tokens"));
  const Json selection = member(settings, "layers"), epsilon = member(settings, "sink_epsilon");
  if (!layers || !heads || *layers < 1 || *heads < 1 || *heads > kMaxHeads / *layers || !max_tokens || *max_tokens < 0 ||
      !selection.is_string() || !epsilon.is_number())
    throw InputError::inconsistent(path, "line 1: not the header of a census run (model.layers, model.heads, settings.layers, "
                                         "settings.max_tokens and settings.sink_epsilon as a run writes them)");
  layers_ = *layers;
  heads_ = *heads;
  max_tokens_ = *max_tokens;
  sink_epsilon_ = epsilon.get<double>();
  layers_text_ = selection.get<std::string>();
  try {
    selected_ = parse_layer_selection(layers_text_, static_cast<int>(layers_));
  } catch (const UsageError&) {
    throw InputError::inconsistent(path, "line 1: settings.layers " + census_value_text(selection) + " selects no layer of " + std::to_string(layers_));
  }
}

void JournalLineChecker::fail(long line_number, const std::string& detail) const {
  throw InputError::inconsistent(path_, "line " + std::to_string(line_number) + ": " + detail + " (a damaged journal; remove it to start afresh)");
}

void JournalLineChecker::check_self_attention(const std::vector<std::optional<double>>& row, long tokens, long line_number,
                                              const std::string& where, const std::string& stack) const {
  const std::vector<std::string>& names = corpus_statistic_names();
  const auto at = [&](const char* name) { return row[static_cast<std::size_t>(std::find(names.begin(), names.end(), name) - names.begin())]; };
  // Undefined only on a one-token text: all of them, or none; a repeat (induction) needs n >= 3.
  const char* const kOneToken[] = {"entropy_normalised_mean", "previous_token_mass", "previous_token_score", "duplicate_token_score",
                                   "induction_score_tl"};
  for (const char* name : kOneToken)
    if (at(name).has_value() != at(kOneToken[0]).has_value())
      fail(line_number, where + ": " + name + " is " + (at(name) ? "a number" : "null") + " and " + kOneToken[0] + " " +
                            (at(kOneToken[0]) ? "a number" : "null") + " (both are undefined only on a one-token text)");
  // A decoder-only model's text is its tokens (an encoder-decoder's tokens add source and target).
  if (max_tokens_ > 0 && at(kOneToken[0]).has_value() != (tokens > 1))
    fail(line_number, where + ": " + kOneToken[0] + " is " + (at(kOneToken[0]) ? "a number" : "null") + " on a text of " +
                          std::to_string(tokens) + (tokens == 1 ? " token" : " tokens") + " (undefined exactly on a one-token text)");
  if (at("induction_score") && !at(kOneToken[0]))
    fail(line_number, where + ": induction_score is a number on a text where " + kOneToken[0] + " is null (a one-token text has no repeat)");
  // No sink: α_1 <= ε, and the first-token mass is at most α_1.
  const std::optional<double> sink = at("sink_rate"), mass = at("first_token_mass");
  if (sink && *sink == 0 && mass && *mass > sink_epsilon_ + kTokenBoundSlack)
    fail(line_number, where + ": first_token_mass " + std::to_string(*mass) + " above sink_epsilon " + std::to_string(sink_epsilon_) +
                          " while sink_rate is 0 (the first-token mass is at most the first key's importance α_1)");
  // A sink: α_1 > ε. An encoder-decoder's rows all see key 0, so its first-token mass is α_1; a
  // decoder-only model's sliding window may hide key 0 from every row but the first ones (row 0
  // at least), so its mass is at least α_1/tokens.
  const double least = stack.empty() ? sink_epsilon_ / static_cast<double>(tokens) : sink_epsilon_;
  if (sink && *sink == 1 && mass && *mass <= least * (1 - kTokenBoundSlack))
    fail(line_number, where + ": first_token_mass " + census_value_text(Json(*mass)) + " at most " + census_value_text(Json(least)) + " while sink_rate is 1 (a sink's " +
                          "first key has weight above sink_epsilon " + census_value_text(Json(sink_epsilon_)) +
                          (stack.empty() ? " on at least one of the " + std::to_string(tokens) + " rows)" : " on average over every row)"));
  // TransformerLens divides Σ_i a_i,i−1 by all n rows' mass, previous_token_mass by the n − 1 rows i ≥ 1.
  const std::optional<double> score = at("previous_token_score"), previous = at("previous_token_mass");
  if (score && previous && *score > *previous * (1 + kTokenBoundSlack) + kStatisticRangeSlack)
    fail(line_number, where + ": previous_token_score " + census_value_text(Json(*score)) + " above previous_token_mass " + census_value_text(Json(*previous)) +
                          " (the score divides the same sum by all n rows, the mass by the n - 1 rows i >= 1)");
  // A causal row i is at most i tokens from any key: the text's mean distance at most (n − 1)/2
  // (an encoder-decoder's decoder has fewer tokens than the line's source + target).
  const std::optional<double> distance = at("mean_distance");
  const double most = static_cast<double>(tokens - 1) / 2;
  if (stack != "encoder" && distance && *distance > most * (1 + kTokenBoundSlack) + kStatisticRangeSlack)
    fail(line_number, where + ": mean_distance " + census_value_text(Json(*distance)) + " above " + census_value_text(Json(most)) + " ((tokens - 1)/2 for " +
                          std::to_string(tokens) + " tokens: a causal row i is at most i tokens from any key)");
}

void JournalLineChecker::expect_heads(bool blocks, int decoder_layers, long line_number) {
  if ((layers_ + 2LL * decoder_layers) * heads_ > kMaxHeads) fail(line_number, "a decoder of " + std::to_string(decoder_layers) + " layers");
  const auto add = [&](const std::string& stack, const std::string& kind, long long layers) {
    for (long long layer = 0; layer < layers; ++layer)
      if (selected_.all() || selected_.contains(static_cast<int>(layer)))
        for (long long h = 0; h < heads_; ++h) expected_.insert({stack, kind, static_cast<int>(layer), static_cast<int>(h)});
  };
  if (!blocks) return add("", "", layers_);
  add("encoder", "self", layers_);
  add("decoder", "self", decoder_layers);
  add("decoder", "cross", decoder_layers);
}

TextStatistics JournalLineChecker::check(const Json& line, long line_number) {
  if (!line.is_object()) fail(line_number, "expected an object {index, tokens, heads}, got " + census_value_text(line));
  for (const auto& item : line.items())
    if (item.key() != "index" && item.key() != "tokens" && item.key() != "heads")
      fail(line_number, "unknown member /" + item.key() + " (a journal line has index, tokens, heads)");
  for (const char* key : {"index", "tokens", "heads"})
    if (!line.contains(key)) fail(line_number, std::string("/") + key + " missing (a journal line has index, tokens, heads)");
  TextStatistics text;
  const std::optional<long long> index = whole(line.at("index")), tokens = whole(line.at("tokens"));
  if (!index || *index < 0) fail(line_number, "/index: expected a text index from 0, got " + census_value_text(line.at("index")));
  const std::string most = max_tokens_ > 0 ? ", at most " + std::to_string(max_tokens_) + " (settings.max_tokens)" : "";
  if (!tokens || *tokens < 1 || (max_tokens_ > 0 && *tokens > max_tokens_))
    fail(line_number, "/tokens: expected a number of tokens from 1" + most + ", got " + census_value_text(line.at("tokens")));
  text.index = static_cast<long>(*index);
  text.tokens = static_cast<long>(*tokens);
  const Json& heads = line.at("heads");
  if (!heads.is_array()) fail(line_number, "/heads: expected a list of [stack, kind, layer, head, values], got " + census_value_text(heads));
  // The head set: a decoder-only model's from the header; an encoder-decoder's decoder depth is
  // not in it, so the first text line sets it and every later line must agree.
  if (!heads_known_) {
    const bool blocks = !heads.empty() && heads[0].is_array() && !heads[0].empty() && heads[0][0] != "";
    int decoder_layers = 0;
    for (const Json& h : heads)
      if (h.is_array() && h.size() == 5 && h[0] == "decoder" && whole(h[2]))
        decoder_layers = static_cast<int>(std::clamp<long long>(*whole(h[2]) + 1, decoder_layers, 1 << 16));
    expect_heads(blocks, decoder_layers, line_number);
    heads_known_ = true;
  }
  std::set<HeadKey> seen;
  std::map<std::pair<std::string, std::string>, std::pair<std::string, std::vector<std::optional<double>>>> first_of_block;
  const std::vector<std::string>& names = corpus_statistic_names();
  for (std::size_t i = 0; i < heads.size(); ++i) {
    const std::string at = "/heads/" + std::to_string(i);
    const Json& h = heads[i];
    const bool shaped = h.is_array() && h.size() == 5 && h[0].is_string() && h[1].is_string() && whole(h[2]) && whole(h[3]) && h[4].is_array();
    if (!shaped) fail(line_number, at + ": expected [stack, kind, layer, head, values], got " + census_value_text(h));
    const HeadKey key{h[0].get<std::string>(), h[1].get<std::string>(), static_cast<int>(std::clamp<long long>(*whole(h[2]), -1, 1 << 30)),
                      static_cast<int>(std::clamp<long long>(*whole(h[3]), -1, 1 << 30))};
    const auto& [stack, kind, layer, head] = key;
    const std::string name = head_name(stack, kind, layer, head);
    if (!expected_.count(key))
      fail(line_number, at + ": " + census_value_text(Json{h[0], h[1], h[2], h[3]}) + " is not a head of this run (" + std::to_string(layers_) +
                            " layers of " + std::to_string(heads_) + " heads, settings.layers " + layers_text_ + ")");
    if (!seen.insert(key).second) fail(line_number, at + ": head " + name + " twice");
    const Json& values = h[4];
    if (values.size() != names.size())
      fail(line_number, at + ": " + std::to_string(values.size()) + " values for head " + name + ", expected " + std::to_string(names.size()) +
                            " (one per statistic)");
    std::vector<std::optional<double>> row;
    for (std::size_t s = 0; s < names.size(); ++s) {
      const Json& v = values[s];
      const std::string what = at + "/4/" + std::to_string(s) + ": " + name + " " + names[s];
      if (!statistic_applies(names[s], kind)) {
        if (!v.is_null()) fail(line_number, what + ": expected null (a statistic of self-attention; this head is cross-attention), got " + census_value_text(v));
        row.push_back(std::nullopt);
        continue;
      }
      if (v.is_null()) {
        if (statistic_always_defined(names[s], kind)) fail(line_number, what + ": expected a number (defined on every text), got null");
        row.push_back(std::nullopt);
        continue;
      }
      // A row sees at most the text's tokens as keys: max_tokens narrowed to this text's.
      // An encoder-decoder's tokens are source + target, at least either block's length.
      const StatisticRange range = statistic_range_for(names[s], text.tokens);
      const double slack = statistic_range_slack(names[s], text.tokens);
      const double x = v.is_number() ? v.get<double>() : std::nan("");
      if (names[s] == "sink_rate" ? !(x == 0 || x == 1) : !(x >= range.low - slack && x <= range.high + slack))
        fail(line_number, what + ": expected " + (names[s] == "sink_rate" ? std::string("0 or 1 (the text's sink indicator)")
                                                                          : "a number in [" + range_bound_text(range.low) + ", " +
                                                                                range_bound_text(range.high) + "] (" + range.what +
                                                                                "; this text has " + std::to_string(text.tokens) + " tokens)") +
                              ", got " + census_value_text(v));
      row.push_back(x);
    }
    if (kind != "cross") check_self_attention(row, text.tokens, line_number, at + ": " + name, stack);
    // Where a statistic is defined is the text's (and its block's), not the head's.
    const auto [first, is_first] = first_of_block.insert({{stack, kind}, {name, row}});
    if (!is_first)
      for (std::size_t s = 0; s < names.size(); ++s)
        if (row[s].has_value() != first->second.second[s].has_value())
          fail(line_number, at + ": " + name + " " + names[s] + " is " + (row[s] ? "a number" : "null") + " and " + first->second.first +
                                "'s " + (first->second.second[s] ? "a number" : "null") +
                                " (where it is defined is the text's: null on every head of a block or on none)");
    text.heads.push_back({CensusHead{stack, kind, layer, head}, std::move(row)});
  }
  for (const HeadKey& key : expected_)
    if (!seen.count(key))
      fail(line_number, "head " + head_name(std::get<0>(key), std::get<1>(key), std::get<2>(key), std::get<3>(key)) + " missing (every head of the run is on every line)");
  return text;
}

}  // namespace attnviz
