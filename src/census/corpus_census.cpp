#include "census/corpus_census.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <nlohmann/json.hpp>

#include "attention/head_detectors.hpp"
#include "attention/head_stats.hpp"
#include "census/census_check.hpp"
#include "census/census_merge_check.hpp"
#include "core/error.hpp"
#include "io/json_file.hpp"

namespace attnviz {

namespace {

using Json = nlohmann::ordered_json;

std::string number(double x) {
  char buffer[32];
  std::snprintf(buffer, sizeof buffer, "%.17g", x);
  return buffer;
}

Json optional_json(const std::optional<double>& x) { return x ? Json(*x) : Json(nullptr); }

}  // namespace

const std::vector<std::string>& corpus_statistic_names() {
  static const std::vector<std::string> names = {
      "entropy_mean", "entropy_normalised_mean", "max_weight_mean", "mean_distance", "diagonal_mass",
      "previous_token_mass", "first_token_mass", "induction_score", "sink_rate", "previous_token_score",
      "duplicate_token_score", "induction_score_tl"};
  return names;
}

std::string CensusHead::name() const { return model_head_name(stack.empty() ? "" : block_name(stack, kind), layer, head); }

BlockStatistics::BlockStatistics(const AttentionBlock& block, const std::vector<std::int32_t>& token_ids) {
  const AttentionRecord& record = block.record;
  allowed_ = record.allowed();
  std::vector<long> skipped = record.fully_masked_rows;  // as census_of_block: padding and fully masked rows
  for (std::size_t i = 0; i < record.query_mask.size(); ++i)
    if (record.query_mask[i] == 0) skipped.push_back(static_cast<long>(i));
  const std::vector<long> rows = rows_for_statistics(static_cast<long>(record.query_tokens.size()), allowed_, skipped);
  self_ = record.mode == "self";
  for (long i = 0, k = 0; i < static_cast<long>(record.query_tokens.size()); ++i) {
    if (k < static_cast<long>(rows.size()) && rows[static_cast<std::size_t>(k)] == i) ++k;
    else skipped_.push_back(i);
  }
  if (rows.empty()) return;
  rows_ = StatisticRows::of(allowed_, rows, static_cast<long>(record.key_tokens.size()));
  if (!self_) return;
  // Blocks that carry no ids (an encoder-decoder's tokens): the tokens' own strings are their ids,
  // one per distinct piece, which a vocabulary's unique pieces make the same comparison.
  std::vector<std::int32_t> interned;
  if (token_ids.size() != record.query_tokens.size()) {
    std::vector<std::string> seen;
    for (const std::string& t : record.query_tokens) {
      const auto at = std::find(seen.begin(), seen.end(), t);
      interned.push_back(static_cast<std::int32_t>(at - seen.begin()));
      if (at == seen.end()) seen.push_back(t);
    }
  }
  cells_ = DetectionCells::of(interned.empty() ? token_ids : interned);
  induction_keys_ = InductionKeys::of(record.query_tokens, rows);
}

void BlockStatistics::add_head(const AttentionBlock& block, int head, const Matrix& w, double sink_epsilon,
                               TextStatistics& text) const {
  if (rows_.rows.empty()) return;
  const HeadStats s = head_statistics(w, rows_, self_);
  const std::optional<double> induction = self_ ? induction_score(w, induction_keys_) : std::nullopt;
  std::vector<std::optional<double>> values = {
      s.entropy_mean, s.entropy_normalised_mean, s.max_weight_mean, s.mean_distance, s.diagonal_mass,
      s.previous_mass, s.first_token_mass, induction,
      self_ ? sink_indicator(w, allowed_, rows_.rows, sink_epsilon) : std::nullopt};
  // TL's denominator: every row's mass, the skipped rows' (all zero from a model) added to the statistics' own.
  double total = s.mass;
  for (long i : skipped_) total += w.row(i).cast<double>().sum();
  const std::array<std::optional<double>, 3> tl = self_ ? detection_scores(w, cells_, total) : std::array<std::optional<double>, 3>{};
  values.insert(values.end(), tl.begin(), tl.end());
  CensusHead name{block.encoder_decoder ? block.stack : "", block.encoder_decoder ? block.kind : "", block.layer, head};
  text.heads.push_back({std::move(name), std::move(values)});
}

void add_block_statistics(const AttentionBlock& block, const std::vector<std::int32_t>& token_ids, double sink_epsilon,
                          TextStatistics& text) {
  // The one-text census's statistics (census_of_block's), over rows and cells found once for all heads.
  const BlockStatistics shared(block, token_ids);
  for (int h = 0; h < block.record.num_heads; ++h)
    shared.add_head(block, h, block.record.weights[static_cast<std::size_t>(h)], sink_epsilon, text);
}

std::size_t CorpusCensus::head_slot(const CensusHead& head, std::size_t hint) {
  const auto same = [&](const CensusHead& h) { return h.stack == head.stack && h.kind == head.kind && h.layer == head.layer && h.head == head.head; };
  if (hint < heads_.size() && same(heads_[hint])) return hint;  // every text lists its heads in the same order
  for (std::size_t i = 0; i < heads_.size(); ++i)
    if (heads_[i].stack == head.stack && heads_[i].kind == head.kind && heads_[i].layer == head.layer && heads_[i].head == head.head)
      return i;
  heads_.push_back(head);
  stats_.emplace_back(corpus_statistic_names().size());
  return heads_.size() - 1;
}

void CorpusCensus::cover(long index) {
  // Texts arrive in order (a shard's K, K+N, …): appending or extending the last range is O(1);
  // the general merge below rebuilt every range for every text (O(texts²) for a strided shard).
  if (covered_.empty() || index > covered_.back().second + 1) {
    covered_.emplace_back(index, index);
    return;
  }
  if (index == covered_.back().second + 1) {
    covered_.back().second = index;
    return;
  }
  IndexRanges single = {{index, index}};
  IndexRanges merged;
  std::merge(covered_.begin(), covered_.end(), single.begin(), single.end(), std::back_inserter(merged));
  covered_.clear();
  for (const auto& r : merged) {
    if (!covered_.empty() && r.first <= covered_.back().second + 1) covered_.back().second = std::max(covered_.back().second, r.second);
    else covered_.push_back(r);
  }
}

long CorpusCensus::texts() const {
  long n = 0;
  for (const auto& r : covered_) n += r.second - r.first + 1;
  return n;
}

void CorpusCensus::add(const TextStatistics& text) {
  cover(text.index);
  tokens_ += text.tokens;
  for (std::size_t k = 0; k < text.heads.size(); ++k) {
    const auto& [head, values] = text.heads[k];
    std::vector<RunningStat>& slot = stats_[head_slot(head, k)];
    for (std::size_t s = 0; s < values.size(); ++s)
      if (values[s]) slot[s].add(*values[s]);
  }
}

void CorpusCensus::merge(const CorpusCensus& other, const std::string& this_source, const std::string& other_source) {
  require_same_provenance(provenance_, other.provenance_, this_source, other_source);
  require_disjoint({covered_, other.covered_}, {this_source, other_source});
  IndexRanges merged;
  std::merge(covered_.begin(), covered_.end(), other.covered_.begin(), other.covered_.end(), std::back_inserter(merged));
  covered_.clear();
  for (const auto& r : merged) {
    if (!covered_.empty() && r.first <= covered_.back().second + 1) covered_.back().second = std::max(covered_.back().second, r.second);
    else covered_.push_back(r);
  }
  tokens_ += other.tokens_;
  for (std::size_t h = 0; h < other.heads_.size(); ++h) {
    std::vector<RunningStat>& slot = stats_[head_slot(other.heads_[h], h)];
    for (std::size_t s = 0; s < slot.size(); ++s) slot[s].merge(other.stats_[h][s]);
  }
}

std::string CorpusCensus::to_json() const {
  Json root;
  root["format"] = kCensusFormat;
  root["version"] = kCensusVersion;
  root["attnviz_version"] = provenance_.attnviz_version;
  root["model_name"] = model_name;
  root["model"] = Json::parse(provenance_.model);
  root["corpus"] = Json::parse(provenance_.corpus);
  root["settings"] = Json::parse(provenance_.settings);
  Json ranges = Json::array();
  for (const auto& r : covered_) ranges.push_back({r.first, r.second});
  root["covers"] = {{"texts", texts()}, {"tokens", tokens_}, {"corpus_texts", corpus_texts_}, {"ranges", ranges}};
  root["statistics"] = corpus_statistic_names();
  Json heads = Json::array();
  for (std::size_t h = 0; h < heads_.size(); ++h) {
    Json head;
    if (!heads_[h].stack.empty()) {
      head["stack"] = heads_[h].stack;
      head["kind"] = heads_[h].kind;
    }
    head["layer"] = heads_[h].layer;
    head["head"] = heads_[h].head;
    for (std::size_t s = 0; s < corpus_statistic_names().size(); ++s) {
      const RunningStat& r = stats_[h][s];
      head[corpus_statistic_names()[s]] = {{"texts", r.count}, {"mean", r.count > 0 ? Json(r.mean) : Json(nullptr)}, {"m2", r.m2},
                                           {"std", optional_json(r.sample_std())}, {"ci95_low", optional_json(r.ci95_low())},
                                           {"ci95_high", optional_json(r.ci95_high())}};
    }
    heads.push_back(std::move(head));
  }
  root["heads"] = std::move(heads);
  return root.dump(1) + "\n";
}

std::string CorpusCensus::to_csv() const {
  const bool stacks = std::any_of(heads_.begin(), heads_.end(), [](const CensusHead& h) { return !h.stack.empty(); });
  std::string csv = stacks ? "stack,kind,layer,head" : "layer,head";
  for (const std::string& s : corpus_statistic_names())
    for (const char* suffix : {"_texts", "_mean", "_std", "_ci95_low", "_ci95_high"}) csv += "," + s + suffix;
  csv += "\n";
  auto field = [](const std::optional<double>& x) { return x ? number(*x) : std::string(); };
  for (std::size_t h = 0; h < heads_.size(); ++h) {
    if (stacks) csv += heads_[h].stack + "," + heads_[h].kind + ",";
    csv += std::to_string(heads_[h].layer) + "," + std::to_string(heads_[h].head);
    for (const RunningStat& r : stats_[h]) {
      csv += "," + std::to_string(r.count) + "," + field(r.count > 0 ? std::optional<double>(r.mean) : std::nullopt) + "," +
             field(r.sample_std()) + "," + field(r.ci95_low()) + "," + field(r.ci95_high());
    }
    csv += "\n";
  }
  return csv;
}

CorpusCensus CorpusCensus::from_json(const std::string& path) {
  try {
    return read_census(path);
  } catch (const nlohmann::json::exception& e) {  // a field of the wrong type
    throw InputError::inconsistent(path, std::string("not a census.json of this attnviz (") + e.what() + ")");
  }
}

CorpusCensus CorpusCensus::read_census(const std::string& path) {
  const nlohmann::json plain = read_json_file(path, 0, JsonRoot::Object, "not a finite double: every number in a census.json is one");
  const Json root = Json::parse(plain.dump());
  check_census_json(root, path);  // after it, every member read below is there, of its type and range
  CorpusCensus census;
  census.provenance_.attnviz_version = root.at("attnviz_version").get<std::string>();
  census.provenance_.model = root.at("model").dump();
  census.provenance_.corpus = root.at("corpus").dump();
  census.provenance_.settings = root.at("settings").dump();
  census.model_name = root.at("model_name").get<std::string>();
  const Json& covers = root.at("covers");
  census.tokens_ = covers.at("tokens").get<long long>();
  census.corpus_texts_ = covers.at("corpus_texts").get<long>();
  for (const Json& r : covers.at("ranges")) census.covered_.push_back({r[0].get<long>(), r[1].get<long>()});
  for (const Json& head : root.at("heads")) {
    const CensusHead key{head.value("stack", ""), head.value("kind", ""), head.at("layer").get<int>(), head.at("head").get<int>()};
    std::vector<RunningStat>& slot = census.stats_[census.head_slot(key, census.heads_.size())];
    for (std::size_t s = 0; s < corpus_statistic_names().size(); ++s) {
      const Json& stat = head.at(corpus_statistic_names()[s]);
      slot[s].count = stat.at("texts").get<long long>();
      slot[s].mean = slot[s].count > 0 ? stat.at("mean").get<double>() : 0.0;
      slot[s].m2 = stat.at("m2").get<double>();
    }
  }
  return census;
}

}  // namespace attnviz
