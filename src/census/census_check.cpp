#include "census/census_check.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <limits>
#include <map>
#include <optional>
#include <nlohmann/json.hpp>
#include <set>
#include <stdexcept>
#include <tuple>
#include <vector>

#include "attention/running_stat.hpp"
#include "census/census_settings.hpp"
#include "census/corpus_census.hpp"
#include "core/error.hpp"
#include "model/model_run.hpp"

namespace attnviz {

namespace {

using Json = nlohmann::ordered_json;
constexpr double kInf = std::numeric_limits<double>::infinity();
// std and the interval are written with 17 digits from the same double arithmetic; 1e-9 leaves
// room for another libm's sqrt or t quantile, and none for an edited value.
constexpr double kDerivedTolerance = 1e-9;

std::string join(const std::vector<std::string>& names) {
  std::string text;
  for (const std::string& n : names) text += (text.empty() ? "" : ", ") + n;
  return text;
}

// The walk over one file: the path for messages and the member checks every level shares.
class Checker {
 public:
  explicit Checker(const std::string& path) : path_(path) {}

  // `object` at `pointer` is an object with exactly the `required` members; another is named.
  void members(const Json& object, const std::string& pointer, const std::vector<std::string>& required) const {
    if (!object.is_object()) throw InputError::bad_value(path_, pointer.empty() ? "/" : pointer, "an object", census_value_text(object));
    for (const auto& item : object.items())
      if (std::find(required.begin(), required.end(), item.key()) == required.end())
        throw InputError::inconsistent(path_, "unknown member " + pointer + "/" + item.key() + " (a census.json has here: " + join(required) + ")");
    for (const std::string& key : required)
      if (!object.contains(key)) throw InputError::missing_field(path_, pointer + "/" + key, "a census.json member");
  }

  long long integer(const Json& object, const std::string& pointer, const char* key, long long low, long long high = kMaxInteger) const {
    const Json& value = object.at(key);
    // An unsigned number past long long's range would read back wrapped (18446744073709551615 as -1).
    const bool whole = value.is_number_integer() && !(value.is_number_unsigned() && value.get<unsigned long long>() > kMaxInteger);
    const long long x = whole ? value.get<long long>() : 0;
    if (!whole || x < low || x > high)
      throw InputError::bad_value(path_, pointer + "/" + key, "an integer " + bounds(low, high), census_value_text(value));
    return x;
  }

  double number(const Json& value, const std::string& pointer, const std::string& expected) const {
    if (!value.is_number() || !std::isfinite(value.get<double>()))
      throw InputError::bad_value(path_, pointer, "a finite number" + expected, census_value_text(value));
    return value.get<double>();
  }

  std::string text(const Json& object, const std::string& pointer, const char* key) const {
    const Json& value = object.at(key);
    if (!value.is_string()) throw InputError::bad_value(path_, pointer + "/" + key, "a string", census_value_text(value));
    return value.get<std::string>();
  }

  void boolean(const Json& object, const std::string& pointer, const char* key) const {
    if (!object.at(key).is_boolean()) throw InputError::bad_value(path_, pointer + "/" + key, "true or false", census_value_text(object.at(key)));
  }

  [[noreturn]] void fail(const std::string& pointer, const std::string& expected, const std::string& found) const {
    throw InputError::bad_value(path_, pointer, expected, found);
  }
  [[noreturn]] void fail(const std::string& detail) const { throw InputError::inconsistent(path_, detail); }

 private:
  static constexpr long long kMaxInteger = std::numeric_limits<long long>::max();
  static std::string bounds(long long low, long long high) {
    if (high == kMaxInteger) return "from " + std::to_string(low);
    return "in [" + std::to_string(low) + ", " + std::to_string(high) + "]";
  }
  const std::string& path_;
};

// What the provenance says the heads are.
struct ModelShape {
  long long layers = 0, heads = 0;
  LayerSelection selected;
  long long max_tokens = 0;  // settings.max_tokens: 0 for no bound
};

ModelShape check_provenance(const Checker& c, const Json& root) {
  // The format first: another file given as a census.json is named as such, not by its members.
  if (!root.is_object()) c.fail("/", "a census.json object", census_value_text(root));
  const auto file_format = root.find("format"), version = root.find("version");
  if (file_format == root.end() || *file_format != kCensusFormat)
    c.fail("/format", std::string("\"") + kCensusFormat + "\" (a census.json of attnviz census)",
           file_format == root.end() ? "nothing" : census_value_text(*file_format));
  if (version == root.end() || *version != kCensusVersion)
    c.fail("/version", std::to_string(kCensusVersion) + " (this attnviz's census format)", version == root.end() ? "nothing" : census_value_text(*version));
  c.members(root, "", {"format", "version", "attnviz_version", "model_name", "model", "corpus", "settings", "covers", "statistics", "heads"});
  c.text(root, "", "attnviz_version");
  const Json& model = root.at("model");
  c.members(model, "/model", {"name", "architecture", "layers", "heads", "d_model", "bytes", "fnv1a64"});
  if (c.text(model, "/model", "name") != c.text(root, "", "model_name"))
    c.fail("/model_name", census_value_text(model.at("name")) + " (/model/name)", census_value_text(root.at("model_name")));
  c.text(model, "/model", "architecture");
  ModelShape shape;
  shape.layers = c.integer(model, "/model", "layers", 1);
  shape.heads = c.integer(model, "/model", "heads", 1);
  c.integer(model, "/model", "d_model", 1);
  c.integer(model, "/model", "bytes", 0);
  const std::string model_hash = c.text(model, "/model", "fnv1a64");
  if (model_hash.size() != 16 || model_hash.find_first_not_of("0123456789abcdef") != std::string::npos)
    c.fail("/model/fnv1a64", "16 lowercase hex digits (FNV-1a 64 of the model's bytes)", census_value_text(model.at("fnv1a64")));

  const Json& corpus = root.at("corpus");
  c.members(corpus, "/corpus", {"file", "format", "fnv1a64", "texts", "skipped_lines"});
  c.text(corpus, "/corpus", "file");
  const std::string format = c.text(corpus, "/corpus", "format");
  if (format != "text" && format != "jsonl") c.fail("/corpus/format", "\"text\" or \"jsonl\"", census_value_text(corpus.at("format")));
  const std::string hash = c.text(corpus, "/corpus", "fnv1a64");
  if (hash.size() != 16 || hash.find_first_not_of("0123456789abcdef") != std::string::npos)
    c.fail("/corpus/fnv1a64", "16 lower-case hex digits", census_value_text(corpus.at("fnv1a64")));
  const long long corpus_texts = c.integer(corpus, "/corpus", "texts", 1);
  const long long skipped = c.integer(corpus, "/corpus", "skipped_lines", 0);

  const Json& settings = root.at("settings");
  c.members(settings, "/settings", {"layers", "max_tokens", "truncate", "limit", "skip_bad_lines", "no_bos", "sink_epsilon"});
  const std::string layers = c.text(settings, "/settings", "layers");
  try {
    shape.selected = parse_layer_selection(layers, static_cast<int>(std::min<long long>(shape.layers, 1 << 30)));
  } catch (const UsageError&) {
    c.fail("/settings/layers", "all, a layer, a list or a range of the model's layers 0-" + std::to_string(shape.layers - 1),
           census_value_text(settings.at("layers")));
  }
  shape.max_tokens = c.integer(settings, "/settings", "max_tokens", 0);
  c.boolean(settings, "/settings", "truncate");
  const long long limit = c.integer(settings, "/settings", "limit", -1);
  c.boolean(settings, "/settings", "skip_bad_lines");
  // A run records its settings in one form (census_settings): the layers canonical, truncate
  // true, a limit only when it left texts out (so it took exactly that many), skip_bad_lines
  // exactly when a line was skipped (a bad line stops a run without it).
  const bool blocks = root.at("heads").is_array() && !root.at("heads").empty() && root.at("heads")[0].is_object() &&
                      root.at("heads")[0].contains("stack");  // an encoder-decoder's --layers knows no layer count
  const std::string canonical = canonical_layers(shape.selected, blocks ? 0 : static_cast<int>(std::min<long long>(shape.layers, 1 << 30)));
  if (layers != canonical) c.fail("/settings/layers", census_value_text(Json(canonical)) + " (the form a run records this selection in)", census_value_text(settings.at("layers")));
  if (settings.at("truncate") != true) c.fail("/settings/truncate", "true (a run that finishes cut every text it had to)", census_value_text(settings.at("truncate")));
  if (limit >= 0 && corpus_texts != limit)
    c.fail("/corpus/texts", std::to_string(limit) + " (/settings/limit: a limit is recorded only when it left texts out, so it took that many)",
           std::to_string(corpus_texts));
  if ((skipped > 0) != (settings.at("skip_bad_lines") == true))
    c.fail("/corpus/skipped_lines", std::string(skipped > 0 ? "0" : "from 1") + " (/settings/skip_bad_lines is " + settings.at("skip_bad_lines").dump() +
                                        ": true exactly when a bad line was skipped)", std::to_string(skipped));
  c.boolean(settings, "/settings", "no_bos");
  const double epsilon = c.number(settings.at("sink_epsilon"), "/settings/sink_epsilon", " in [0, 1]");
  if (epsilon < 0 || epsilon > 1) c.fail("/settings/sink_epsilon", "a number in [0, 1]", census_value_text(settings.at("sink_epsilon")));
  return shape;
}

// covers: returns covers.texts once the ranges agree with it.
long long check_covers(const Checker& c, const Json& root, const ModelShape& shape) {
  const Json& covers = root.at("covers");
  c.members(covers, "/covers", {"texts", "tokens", "corpus_texts", "ranges"});
  const long long corpus_texts = c.integer(covers, "/covers", "corpus_texts", 1);
  const long long recorded = root.at("corpus").at("texts").get<long long>();
  if (corpus_texts != recorded)
    c.fail("/covers/corpus_texts", std::to_string(recorded) + " (/corpus/texts)", std::to_string(corpus_texts));
  // A run holds at least one text (an empty shard is refused), and every text has a token.
  const long long texts = c.integer(covers, "/covers", "texts", 1, corpus_texts);
  const long long tokens = c.integer(covers, "/covers", "tokens", 0);
  if (tokens < texts) c.fail("/covers/tokens", "at least " + std::to_string(texts) + " (/covers/texts: every text has a token)", std::to_string(tokens));
  if (shape.max_tokens > 0 && tokens / shape.max_tokens + (tokens % shape.max_tokens > 0) > texts)
    c.fail("/covers/tokens", "at most " + std::to_string(texts) + " texts * " + std::to_string(shape.max_tokens) +
                                 " (/settings/max_tokens)", std::to_string(tokens));
  const Json& ranges = covers.at("ranges");
  if (!ranges.is_array()) c.fail("/covers/ranges", "a list of [first, last] pairs", census_value_text(ranges));
  long long counted = 0, previous_last = -1;
  for (std::size_t i = 0; i < ranges.size(); ++i) {
    const std::string pointer = "/covers/ranges/" + std::to_string(i);
    const Json& r = ranges[i];
    const bool pair = r.is_array() && r.size() == 2 && r[0].is_number_integer() && r[1].is_number_integer();
    if (!pair) c.fail(pointer, "[first, last], two integers", census_value_text(r));
    const long long first = r[0].get<long long>(), last = r[1].get<long long>();
    if (first < 0 || last < first || last >= corpus_texts)
      c.fail(pointer, "text indices 0 <= first <= last < " + std::to_string(corpus_texts) + " (/covers/corpus_texts)", census_value_text(r));
    if (first <= previous_last)
      c.fail(pointer, "a range after the one before it (ranges sorted and disjoint; the one before ends at " +
                          std::to_string(previous_last) + ")", census_value_text(r));
    previous_last = last;
    counted += last - first + 1;
  }
  if (counted != texts)
    c.fail("/covers/texts", std::to_string(counted) + " (the number of text indices in /covers/ranges)", std::to_string(texts));
  return texts;
}

void check_statistic_names(const Checker& c, const Json& root) {
  const Json& names = root.at("statistics");
  const std::vector<std::string>& known = corpus_statistic_names();
  if (!names.is_array()) c.fail("/statistics", "the list of statistic names", census_value_text(names));
  std::set<std::string> seen;
  for (std::size_t i = 0; i < names.size(); ++i) {
    const std::string pointer = "/statistics/" + std::to_string(i);
    if (!names[i].is_string() || std::find(known.begin(), known.end(), names[i].get<std::string>()) == known.end())
      c.fail(pointer, "a statistic attnviz knows (" + join(known) + ")", census_value_text(names[i]));
    if (!seen.insert(names[i].get<std::string>()).second) c.fail(pointer, "each statistic once", census_value_text(names[i]) + " again");
  }
  for (const std::string& name : known)
    if (!seen.count(name)) c.fail("/statistics: statistic " + name + " missing (a census.json lists all of: " + join(known) + ")");
  if (names != Json(known)) c.fail("/statistics", "the statistics in attnviz's order (" + join(known) + ")", census_value_text(names));
}

// What n values in [range.low, range.high] allow of m2 = Σ (x − mean)²: at most
// n·(mean − low)·(high − mean) (Bhatia and Davis 2000, "A better bound on the variance"), so at
// most n·(high − low)²/4; sink_rate's 0/1 values give mean k/n and m2 exactly k(n − k)/n.
void check_spread(const Checker& c, const std::string& pointer, const std::string& name, const RunningStat& r, const StatisticRange& range) {
  const double n = static_cast<double>(r.count);
  if (name == "sink_rate") {
    const double k = std::round(r.mean * n);
    if (std::abs(r.mean - k / n) > kStatisticRangeSlack)
      c.fail(pointer + "/mean", "k/" + std::to_string(r.count) + " for a whole number k of texts (a rate of 0/1 indicators over " +
                                    std::to_string(r.count) + " texts)", census_value_text(Json(r.mean)));
    const double m2 = k * (n - k) / n;
    if (std::abs(r.m2 - m2) > kDerivedTolerance * std::max(1.0, m2))
      c.fail(pointer + "/m2", census_value_text(Json(m2)) + " (k(n - k)/n: " + std::to_string(static_cast<long long>(k)) + " of " + std::to_string(r.count) +
                                  " texts are 1, the rest 0)", census_value_text(Json(r.m2)));
    return;
  }
  if (!(range.high < kInf)) return;
  const double most = n * std::max(0.0, r.mean - range.low) * std::max(0.0, range.high - r.mean);
  const double width = range.high - range.low;
  if (r.m2 > most + kDerivedTolerance * std::max(1.0, n * width * width / 4))
    c.fail(pointer + "/m2", "at most " + census_value_text(Json(most)) + " (n * (mean - low) * (high - mean) for " + std::to_string(r.count) +
                                " texts of values in [" + range_bound_text(range.low) + ", " + range_bound_text(range.high) + "])",
           census_value_text(Json(r.m2)));
}

// One statistic of one head.
void check_statistic(const Checker& c, const Json& head, const std::string& head_pointer, const std::string& name, long long texts,
                     const std::string& kind, long long max_tokens) {
  const std::string pointer = head_pointer + "/" + name;
  const Json& stat = head.at(name);
  c.members(stat, pointer, {"texts", "mean", "m2", "std", "ci95_low", "ci95_high"});
  RunningStat r;
  r.count = c.integer(stat, pointer, "texts", 0, texts);
  if (statistic_always_defined(name, kind) && r.count != texts)
    c.fail(pointer + "/texts", std::to_string(texts) + " (/covers/texts: " + name + " is defined on every text)", std::to_string(r.count));
  if (r.count == 0) {
    if (!stat.at("mean").is_null()) c.fail(pointer + "/mean", "null (no text defines it: texts is 0)", census_value_text(stat.at("mean")));
    if (stat.at("m2") != Json(0.0)) c.fail(pointer + "/m2", "0 (texts is 0)", census_value_text(stat.at("m2")));
  } else {
    const StatisticRange range = statistic_range_for(name, max_tokens);
    const std::string range_text = " in [" + range_bound_text(range.low) + ", " + range_bound_text(range.high) + "]";
    const double slack = statistic_range_slack(name, max_tokens);
    r.mean = c.number(stat.at("mean"), pointer + "/mean", range_text);
    if (r.mean < range.low - slack || r.mean > range.high + slack)
      c.fail(pointer + "/mean", "a mean" + range_text + " (" + range.what + ")", census_value_text(stat.at("mean")));
    r.m2 = c.number(stat.at("m2"), pointer + "/m2", " from 0");
    if (r.m2 < 0 || std::signbit(r.m2)) c.fail(pointer + "/m2", "a finite number from 0 (a sum of squares)", census_value_text(stat.at("m2")));
    if (r.count == 1 && r.m2 != 0) c.fail(pointer + "/m2", "0 (one text has no spread)", census_value_text(stat.at("m2")));
    check_spread(c, pointer, name, r, range);
  }
  const std::tuple<const char*, std::optional<double>, const char*> derived[] = {
      {"std", r.sample_std(), "sqrt(m2 / (texts - 1))"},
      {"ci95_low", r.ci95_low(), "mean - t * std / sqrt(texts)"},
      {"ci95_high", r.ci95_high(), "mean + t * std / sqrt(texts)"}};
  for (const auto& [key, expected, formula] : derived) {
    const Json& value = stat.at(key);
    const std::string at = pointer + "/" + key;
    if (!expected) {
      if (!value.is_null()) c.fail(at, "null (fewer than 2 texts)", census_value_text(value));
      continue;
    }
    const bool agrees = value.is_number() && std::abs(value.get<double>() - *expected) <= kDerivedTolerance * std::max(1.0, std::abs(*expected));
    if (!agrees) c.fail(at, census_value_text(Json(*expected)) + " (" + formula + ", from texts, mean and m2)", census_value_text(value));
  }
}

// Across one self-attention head's statistics: those undefined only on a one-token text count the
// same texts, and the induction score (which needs a repeated token, so n >= 3) no more; the
// first-token mass is at most α_1 on every text (rows that cannot see key 0 put 0 on it), and
// α_1 <= ε on a text that is no sink, so its sum is at most k + (n - k)·ε for k sinks.
void check_self_attention_counts(const Checker& c, const Json& head, const std::string& pointer, double epsilon, bool blocks,
                                 long long longest) {
  const char* const kOneToken[] = {"entropy_normalised_mean", "previous_token_mass", "previous_token_score", "duplicate_token_score",
                                   "induction_score_tl"};
  const Json& texts = head.at(kOneToken[0]).at("texts");
  for (const char* name : kOneToken)
    if (head.at(name).at("texts") != texts)
      c.fail(pointer + "/" + name + "/texts", census_value_text(texts) + " (" + pointer + "/" + kOneToken[0] + "/texts: both are undefined " +
                                                  "only on a one-token text)", census_value_text(head.at(name).at("texts")));
  if (head.at("induction_score").at("texts").get<long long>() > texts.get<long long>())
    c.fail(pointer + "/induction_score/texts", "at most " + census_value_text(texts) + " (the texts of more than one token: a repeat needs three)",
           census_value_text(head.at("induction_score").at("texts")));
  // TransformerLens's previous-token score divides Σ_i a_i,i−1 by every row's mass (n rows summing
  // to 1), previous_token_mass the same sum by the n − 1 rows i ≥ 1: score ≤ mass on every text
  // (both defined on the same texts, checked above), so in the mean.
  const Json& score = head.at("previous_token_score");
  const Json& previous = head.at("previous_token_mass");
  if (score.at("texts") != 0 && score.at("mean").get<double>() > previous.at("mean").get<double>() * (1 + kTokenBoundSlack) + kStatisticRangeSlack)
    c.fail(pointer + "/previous_token_score/mean",
           "at most " + census_value_text(previous.at("mean")) + " (" + pointer + "/previous_token_mass/mean: the score divides the same sum " +
               "by all n rows, the mass by the n - 1 rows i >= 1)", census_value_text(score.at("mean")));
  const Json& mass = head.at("first_token_mass");
  const Json& sink = head.at("sink_rate");
  const double n = mass.at("texts").get<double>();
  if (n == 0 || sink.at("texts") == 0) return;
  const double sinks = std::round(sink.at("mean").get<double>() * sink.at("texts").get<double>());
  const double most = (sinks + (n - sinks) * epsilon) / n;
  if (mass.at("mean").get<double>() > most + kTokenBoundSlack)
    c.fail(pointer + "/first_token_mass/mean",
           "at most " + census_value_text(Json(most)) + " (sink_rate counts " + std::to_string(static_cast<long long>(sinks)) + " sink texts of " +
               census_value_text(mass.at("texts")) + "; on the others the first key's weight is at most sink_epsilon " + census_value_text(Json(epsilon)) + ")",
           census_value_text(mass.at("mean")));
  // On a sink text α_1 > ε. An encoder-decoder's self-attention has every row see key 0, so its
  // first-token mass is α_1; a decoder-only model's sliding window may hide key 0 from all rows
  // but the first ones (at least row 0), so its mass is at least α_1/len > ε/len, len ≤ longest.
  const double least = sinks * epsilon / n / (blocks ? 1.0 : static_cast<double>(longest));
  if (mass.at("mean").get<double>() < least * (1 - kTokenBoundSlack) - kStatisticRangeSlack)
    c.fail(pointer + "/first_token_mass/mean",
           "at least " + census_value_text(Json(least)) + " (sink_rate counts " + std::to_string(static_cast<long long>(sinks)) + " sink texts of " +
               census_value_text(mass.at("texts")) + ", each with first-key weight above sink_epsilon " + census_value_text(Json(epsilon)) +
               (blocks ? ")" : " over at most " + std::to_string(longest) + " rows)"), census_value_text(mass.at("mean")));
  // m2 with k sink texts' masses in [a, 1] (a = ε, or ε/L) and n − k others' in [0, ε]: split
  // by Chan et al. into the two groups' m2s and their means' spread, each group bounded by
  // Bhatia and Davis; the non-sink mean y fixes the sink mean, so the bound is a quadratic in y,
  // maximised over the y both ranges allow. k = 0 or n: one group, Bhatia and Davis alone.
  const double low_sink = epsilon / (blocks ? 1.0 : static_cast<double>(longest)) * (1 - kTokenBoundSlack);
  const double eps_high = epsilon * (1 + kTokenBoundSlack) + kStatisticRangeSlack;
  const double m = mass.at("mean").get<double>(), m2 = mass.at("m2").get<double>();
  double most_m2 = 0, low = 0, high = 1;
  if (sinks == 0) {
    high = eps_high;
    most_m2 = n * std::max(0.0, m - low) * std::max(0.0, high - m);
  } else if (sinks == n) {
    low = low_sink;
    most_m2 = n * std::max(0.0, m - low) * std::max(0.0, high - m);
  } else {
    const double k = sinks, rest = n - sinks;
    const auto bound = [&](double y) {
      const double x = (n * m - rest * y) / k;  // the sink texts' mean
      // One text has no spread of its own (Bhatia and Davis is loose there).
      return (k > 1 ? k * std::max(0.0, x - low_sink) * std::max(0.0, 1 - x) : 0.0) +
             (rest > 1 ? rest * std::max(0.0, y) * std::max(0.0, eps_high - y) : 0.0) + k * rest / n * (x - y) * (x - y);
    };
    const double y_low = std::max(0.0, (n * m - k) / rest), y_high = std::min(eps_high, (n * m - k * low_sink) / rest);
    if (y_low > y_high) return;  // no split fits the mean; the mean's bounds above decide
    // A quadratic in y: its largest value at an end or at the vertex, found from three values.
    const double mid = (y_low + y_high) / 2, f0 = bound(y_low), f1 = bound(mid), f2 = bound(y_high);
    most_m2 = std::max({f0, f1, f2});
    const double curvature = f0 - 2 * f1 + f2;
    if (curvature < 0) {
      const double vertex = mid - (f2 - f0) / 4 / curvature * (y_high - y_low);
      if (vertex > y_low && vertex < y_high) most_m2 = std::max(most_m2, bound(vertex));
    }
  }
  if (m2 > most_m2 + kTokenBoundSlack * std::max(1.0, n * (high - low) * (high - low) / 4))
    c.fail(pointer + "/first_token_mass/m2",
           "at most " + census_value_text(Json(most_m2)) + " (" +
               (sinks == 0 ? "n * (mean - low) * (high - mean): sink_rate says no text is a sink, so each first-token mass is in [0, sink_epsilon]"
                : sinks == n ? "n * (mean - low) * (high - mean): sink_rate says every text is a sink, so each first-token mass is in [" +
                                   range_bound_text(low) + ", 1]"
                             : "sink_rate says " + std::to_string(static_cast<long long>(sinks)) + " of " + census_value_text(mass.at("texts")) +
                                   " texts are sinks, with first-token mass above " + range_bound_text(low_sink) +
                                   ", the others at most sink_epsilon: Bhatia and Davis on each group") + ")",
           census_value_text(mass.at("m2")));
}

// Bounds /covers/tokens puts on one head: T tokens over n texts, each of at least one token, so
// no text (nor an encoder-decoder's source or target, parts of its tokens) is longer than
// L = T − n + 1, and at most T − n texts have two tokens or more (three for a repeat). A row sees
// at most L keys: entropy ≤ ln L, largest weight ≥ 1/L. Mean distance: a causal row i is at most
// i tokens from any key, so a text's is at most (len − 1)/2; an encoder's row at most len − 1;
// summed over texts, (T − n)/2 and T − n.
void check_token_bounds(const Checker& c, const Json& head, const std::string& pointer, const std::string& stack,
                        const std::string& kind, long long texts, long long tokens) {
  const long long longest = tokens - texts + 1;
  const auto mean = [&](const char* name) { return head.at(name).at("mean").get<double>(); };
  const auto above = [&](const char* name, double most, const std::string& why) {
    if (head.at(name).at("texts") != 0 && mean(name) > most * (1 + kTokenBoundSlack) + kStatisticRangeSlack)
      c.fail(pointer + "/" + name + "/mean", "at most " + census_value_text(Json(most)) + " (" + why + ")", census_value_text(head.at(name).at("mean")));
  };
  const std::string covers = std::to_string(texts) + " texts of " + std::to_string(tokens) + " tokens (/covers): none longer than " +
                             std::to_string(longest);
  above("entropy_mean", std::log(static_cast<double>(longest)), covers + ", ln of that");
  const double least = 1.0 / static_cast<double>(longest);
  if (mean("max_weight_mean") < least * (1 - kTokenBoundSlack) - kStatisticRangeSlack)
    c.fail(pointer + "/max_weight_mean/mean", "at least " + census_value_text(Json(least)) + " (" + covers + ", 1 over that)",
           census_value_text(head.at("max_weight_mean").at("mean")));
  const auto counted = [&](const char* name, long long most, const std::string& why) {
    if (head.at(name).at("texts").get<long long>() > most)
      c.fail(pointer + "/" + name + "/texts", "at most " + std::to_string(most) + " (" + why + ")", census_value_text(head.at(name).at("texts")));
  };
  const std::string spare = std::to_string(tokens) + " tokens over " + std::to_string(texts) + " texts (/covers)";
  counted("entropy_normalised_mean", tokens - texts, spare + ": a text of two tokens or more takes one more");
  if (kind == "cross") return;
  counted("induction_score", (tokens - texts) / 2, spare + ": a text with a repeated token has three or more");
  const bool causal = stack != "encoder";  // a decoder's self-attention, alone or beside an encoder
  const double distance = static_cast<double>(tokens - texts) / static_cast<double>(texts) / (causal ? 2.0 : 1.0);
  above("mean_distance", distance, spare + (causal ? ": a causal text's mean distance is at most (len - 1)/2" :
                                                     ": an encoder text's mean distance is at most len - 1"));
}

using HeadKey = std::tuple<std::string, std::string, long long, long long>;  // stack, kind, layer, head

std::string head_name(const HeadKey& key) {
  return CensusHead{std::get<0>(key), std::get<1>(key), static_cast<int>(std::get<2>(key)), static_cast<int>(std::get<3>(key))}.name();
}

// One head's block, layer and head (within the model and settings.layers) and statistics.
HeadKey check_head(const Checker& c, const Json& head, const std::string& pointer, const ModelShape& shape, bool blocks,
                   long long texts, long long tokens, const Json& settings) {
  std::vector<std::string> required = {"layer", "head"};
  if (blocks) required = {"stack", "kind", "layer", "head"};
  const std::vector<std::string>& names = corpus_statistic_names();
  required.insert(required.end(), names.begin(), names.end());
  c.members(head, pointer, required);
  std::string stack, kind;
  if (blocks) {
    stack = c.text(head, pointer, "stack");
    kind = c.text(head, pointer, "kind");
    if (stack != "encoder" && stack != "decoder") c.fail(pointer + "/stack", "\"encoder\" or \"decoder\"", census_value_text(head.at("stack")));
    if (kind != "self" && !(kind == "cross" && stack == "decoder"))
      c.fail(pointer + "/kind", stack == "decoder" ? "\"self\" or \"cross\"" : "\"self\" (an encoder has no cross-attention)",
             census_value_text(head.at("kind")));
  }
  // An encoder-decoder records its encoder's depth; its decoder's may differ.
  const bool depth_known = !blocks || stack == "encoder";
  const long long layer = c.integer(head, pointer, "layer", 0, depth_known ? shape.layers - 1 : std::numeric_limits<int>::max());
  if (!shape.selected.all() && !shape.selected.contains(static_cast<int>(layer)))
    c.fail(pointer + "/layer", "a layer /settings/layers selects (" + settings.at("layers").get<std::string>() + ")", std::to_string(layer));
  const long long h = c.integer(head, pointer, "head", 0, shape.heads - 1);
  for (const std::string& name : names) check_statistic(c, head, pointer, name, texts, kind, shape.max_tokens);
  if (kind == "cross")  // cross-attention has the first three statistics; the rest are self-attention's
    for (std::size_t s = 3; s < names.size(); ++s)
      if (head.at(names[s]).at("texts") != 0)
        c.fail(pointer + "/" + names[s] + "/texts", "0 (a statistic of self-attention; this head is cross-attention)",
               census_value_text(head.at(names[s]).at("texts")));
  if (kind != "cross") check_self_attention_counts(c, head, pointer, settings.at("sink_epsilon").get<double>(), blocks, tokens - texts + 1);
  check_token_bounds(c, head, pointer, stack, kind, texts, tokens);
  return {stack, kind, layer, h};
}

// Every selected layer × every head of each block is in `seen`. The decoder's selected layers
// are those from 0 up to the deepest one present, in self- and cross-attention alike.
void check_head_set(const Checker& c, const std::map<HeadKey, std::size_t>& seen, const ModelShape& shape, bool blocks,
                    const Json& settings) {
  long long decoder_layers = 0;
  for (const auto& [key, index] : seen)
    if (std::get<0>(key) == "decoder") decoder_layers = std::max(decoder_layers, std::get<2>(key) + 1);
  const std::vector<std::pair<std::string, std::string>> kinds =
      blocks ? std::vector<std::pair<std::string, std::string>>{{"encoder", "self"}, {"decoder", "self"}, {"decoder", "cross"}}
             : std::vector<std::pair<std::string, std::string>>{{"", ""}};
  for (const auto& [stack, kind] : kinds) {
    long long layers = stack == "decoder" ? decoder_layers : shape.layers;
    if (!shape.selected.all()) layers = std::min<long long>(layers, shape.selected.last() + 1);  // not 10^12 layers of nothing
    for (long long layer = 0; layer < layers; ++layer) {
      if (!shape.selected.all() && !shape.selected.contains(static_cast<int>(layer))) continue;
      for (long long h = 0; h < shape.heads; ++h) {
        const HeadKey key{stack, kind, layer, h};
        if (!seen.count(key))
          c.fail("/heads: head " + head_name(key) + " missing (the model has " + std::to_string(shape.layers) + " layers of " +
                 std::to_string(shape.heads) + " heads, /settings/layers is " + settings.at("layers").dump() +
                 "; each selected head is listed once)");
      }
    }
  }
}

// The heads, each checked, none twice; then the set compared with what the model and settings select.
void check_heads(const Checker& c, const Json& root, const ModelShape& shape, long long texts) {
  const Json& heads = root.at("heads");
  if (!heads.is_array()) c.fail("/heads", "a list of heads", census_value_text(heads));
  const bool blocks = !heads.empty() && heads[0].is_object() && heads[0].contains("stack");
  const long long tokens = root.at("covers").at("tokens").get<long long>();
  std::map<HeadKey, std::size_t> seen;  // -> its index in /heads
  std::map<std::pair<std::string, std::string>, std::size_t> first_of_block;  // (stack, kind) -> its first head's index
  for (std::size_t i = 0; i < heads.size(); ++i) {
    const std::string pointer = "/heads/" + std::to_string(i);
    const HeadKey key = check_head(c, heads[i], pointer, shape, blocks, texts, tokens, root.at("settings"));
    const auto [at, added] = seen.insert({key, i});
    if (!added) c.fail(pointer + ": head " + head_name(key) + " listed twice (also /heads/" + std::to_string(at->second) + ")");
    // Where a statistic is defined (a text of two tokens, a repeated token) is the text's and its
    // block's, not the head's: every head of one kind of block counts the same texts.
    const auto [first, is_first] = first_of_block.insert({{std::get<0>(key), std::get<1>(key)}, i});
    if (is_first) continue;
    const Json& other = heads[first->second];
    for (const std::string& name : corpus_statistic_names())
      if (heads[i].at(name).at("texts") != other.at(name).at("texts"))
        c.fail(pointer + "/" + name + "/texts",
               census_value_text(other.at(name).at("texts")) + " (head " + head_name(key) + "; head " +
                   head_name({std::get<0>(key), std::get<1>(key), other.at("layer").get<long long>(), other.at("head").get<long long>()}) +
                   ", /heads/" + std::to_string(first->second) + ", has that: where " + name +
                   " is defined is the text's, the same on every head of a block)",
               census_value_text(heads[i].at(name).at("texts")));
  }
  check_head_set(c, seen, shape, blocks, root.at("settings"));
}

}  // namespace

std::string census_value_text(const nlohmann::ordered_json& value) {
  const std::string text = value.dump();
  return text.size() <= 60 ? text : text.substr(0, 57) + "...";
}

std::string range_bound_text(double x) {
  char buffer[32];
  std::snprintf(buffer, sizeof buffer, "%g", x);
  return buffer;
}

void check_census_json(const Json& root, const std::string& path) {
  const Checker c(path);
  const ModelShape shape = check_provenance(c, root);
  const long long texts = check_covers(c, root, shape);
  check_statistic_names(c, root);
  check_heads(c, root, shape, texts);
}

}  // namespace attnviz
