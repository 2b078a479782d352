#include "records/compare_stats.hpp"

#include <algorithm>
#include <cctype>
#include <cstdio>
#include <filesystem>
#include <optional>
#include <ostream>

#include "attention/head_stats.hpp"
#include "core/error.hpp"

namespace attnviz {

std::string stat_text(double x) {
  char text[32];
  std::snprintf(text, sizeof text, "%.3f", x);
  return text;
}

std::string stat_text(const std::optional<double>& x) { return x ? stat_text(*x) : "-"; }

std::string stats_format(const std::string& path) {
  std::string extension = std::filesystem::path(path).extension().string();
  for (char& c : extension) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  if (extension != ".json" && extension != ".csv") {
    throw UsageError::bad_option("--stats", "the file name must end in .json or .csv, got \"" + path + "\"");
  }
  return extension;
}

// Rows fully masked in any run, and padding queries (query_mask 0), are left out of every
// statistic, so both runs are measured on the same real rows; no row left: nothing to compare.
StatsReport collect_stats(const std::vector<CompareRun>& runs, const std::vector<int>& heads, const MaskMatrix& allowed) {
  std::vector<long> skipped;
  for (const CompareRun& run : runs) {
    skipped.insert(skipped.end(), run.record.fully_masked_rows.begin(), run.record.fully_masked_rows.end());
    for (std::size_t i = 0; i < run.record.query_mask.size(); ++i) {
      if (run.record.query_mask[i] == 0) skipped.push_back(static_cast<long>(i));
    }
  }
  const std::vector<long> rows =
      rows_for_statistics(static_cast<long>(runs.front().record.query_tokens.size()), allowed, skipped);
  if (rows.empty()) {
    throw InputError::inconsistent(runs.back().record.inputs.front(), "every query row is fully masked (no key to "
                                                                      "attend to): there are no weights to compare");
  }
  StatsReport report;
  report.query_tokens = runs.front().record.query_tokens;
  report.key_tokens = runs.front().record.key_tokens;
  std::vector<Matrix> matrices;
  // Each run's statistics use its own mask: its weights are a distribution over the keys it
  // allowed, so entropy is normalised by those (with the combined mask, a run masked less than
  // the other had H / ln k above 1).
  std::vector<MaskMatrix> own_masks;
  for (const CompareRun& run : runs) own_masks.push_back(run.record.allowed());
  for (int h : heads) {
    for (std::size_t r = 0; r < runs.size(); ++r) {
      const CompareRun& run = runs[r];
      const bool self = run.record.mode == "self";
      report.stats.push_back(head_statistics({run.record.weights[h]}, own_masks[r], rows, self).front());
      report.head_names.push_back((run.label.empty() ? "" : run.label + ":") + head_name(run, h));
      matrices.push_back(run.record.weights[h]);
    }
  }
  report.divergence = head_divergence_matrix(matrices, rows);
  return report;
}

void print_stats(const StatsReport& report, std::ostream& out) {
  std::size_t width = 4;
  for (const std::string& name : report.head_names) width = std::max(width, name.size());
  char line[512];
  std::snprintf(line, sizeof line, "%-*s %8s %8s %8s %8s %8s %8s %8s %8s %8s\n", static_cast<int>(width), "head",
                "H_mean", "H_min", "H_max", "H/ln_k", "max_w", "distance", "diagonal", "previous", "first");
  out << line;
  for (std::size_t h = 0; h < report.stats.size(); ++h) {
    const HeadStats& s = report.stats[h];
    std::snprintf(line, sizeof line, "%-*s %8s %8s %8s %8s %8s %8s %8s %8s %8s\n", static_cast<int>(width),
                  report.head_names[h].c_str(), stat_text(s.entropy_mean).c_str(), stat_text(s.entropy_min).c_str(),
                  stat_text(s.entropy_max).c_str(), stat_text(s.entropy_normalised_mean).c_str(),
                  stat_text(s.max_weight_mean).c_str(), stat_text(s.mean_distance).c_str(),
                  stat_text(s.diagonal_mass).c_str(), stat_text(s.previous_mass).c_str(),
                  stat_text(s.first_token_mass).c_str());
    out << line;
  }
  out << "(entropies in nats over the keys of each query row; H/ln_k normalised by the keys a row may see; "
         "max_w and masses are mean weights; distance in tokens; '-' = self-attention only, or undefined: H/ln_k when "
         "no row sees two keys, previous with one token)\n\n";
  out << "Jensen-Shannon divergence between heads (nats, mean over query rows; 0 = identical, ln 2 = 0.693 max)\n";
  std::snprintf(line, sizeof line, "%-*s", static_cast<int>(width), "");
  out << line;
  for (const std::string& name : report.head_names) {
    std::snprintf(line, sizeof line, " %*s", static_cast<int>(std::max<std::size_t>(8, name.size())), name.c_str());
    out << line;
  }
  out << "\n";
  for (Eigen::Index a = 0; a < report.divergence.rows(); ++a) {
    std::snprintf(line, sizeof line, "%-*s", static_cast<int>(width), report.head_names[a].c_str());
    out << line;
    for (Eigen::Index b = 0; b < report.divergence.cols(); ++b) {
      const int column = static_cast<int>(std::max<std::size_t>(8, report.head_names[b].size()));
      std::snprintf(line, sizeof line, " %*s", column, stat_text(report.divergence(a, b)).c_str());
      out << line;
    }
    out << "\n";
  }
}

}  // namespace attnviz
