#include "cli/stale_outputs.hpp"

#include <algorithm>
#include <cctype>
#include <filesystem>
#include <regex>
#include <set>

#include "core/counted.hpp"

namespace attnviz {

namespace fs = std::filesystem;

namespace {

// Every name an attnviz command gives a file of an output folder: heatmaps and render (grid,
// head_<h>, index.html, the whole-model pictures), attribute, explain and census (with its
// journal, texts.jsonl).
bool is_output_name(const std::string& name) {
  static const std::regex names(
      "(grid|head_[0-9]+)\\.(png|svg)|index\\.html|(overview|rollout|flow)\\.png|attribution\\.(json|png|svg|html)|"
      "explain\\.(json|png|svg|html)|circuits\\.(png|svg)|census\\.(json|csv|png)|texts\\.jsonl");
  return std::regex_match(name, names);
}

// The folders a model run makes: layer_<l>, and encoder/, decoder/layer_<l>/{self,cross}.
bool is_output_folder(const std::string& name) {
  static const std::regex names("layer_[0-9]+|encoder|decoder|self|cross");
  return std::regex_match(name, names);
}

void collect(const fs::path& root, const fs::path& folder, std::vector<std::string>& found) {
  std::error_code ec;
  for (const fs::directory_entry& entry : fs::directory_iterator(folder, ec)) {
    const std::string name = entry.path().filename().string();
    if (entry.is_directory(ec) && !entry.is_symlink(ec)) {
      if (is_output_folder(name)) collect(root, entry.path(), found);
    } else if (entry.is_regular_file(ec) && is_output_name(name)) {
      found.push_back(entry.path().lexically_relative(root).generic_string());
    }
  }
}

// "head_2.png" < "head_10.png": runs of digits compare as numbers.
bool natural_less(const std::string& a, const std::string& b) {
  std::size_t i = 0, j = 0;
  while (i < a.size() && j < b.size()) {
    if (std::isdigit(static_cast<unsigned char>(a[i])) && std::isdigit(static_cast<unsigned char>(b[j]))) {
      std::size_t ie = i, je = j;
      while (ie < a.size() && std::isdigit(static_cast<unsigned char>(a[ie]))) ++ie;
      while (je < b.size() && std::isdigit(static_cast<unsigned char>(b[je]))) ++je;
      const std::string x = a.substr(i, ie - i), y = b.substr(j, je - j);
      if (x.size() != y.size()) return x.size() < y.size();
      if (x != y) return x < y;
      i = ie;
      j = je;
    } else {
      if (a[i] != b[j]) return a[i] < b[j];
      ++i;
      ++j;
    }
  }
  return a.size() - i < b.size() - j;
}

}  // namespace

std::vector<std::string> stale_outputs(const std::string& folder, const std::vector<std::string>& written) {
  const fs::path root = fs::path(folder).lexically_normal();
  std::set<std::string> ours;
  for (const std::string& path : written) ours.insert(fs::path(path).lexically_normal().lexically_relative(root).generic_string());
  std::vector<std::string> found;
  collect(root, root, found);
  std::erase_if(found, [&](const std::string& path) { return ours.count(path) > 0; });
  std::sort(found.begin(), found.end(), natural_less);
  return found;
}

namespace {

// The folders (relative to `root`, "" for root itself) holding a file this run wrote.
std::set<std::string> folders_written(const fs::path& root, const std::vector<std::string>& written) {
  std::set<std::string> touched = {""};
  for (const std::string& path : written) {
    fs::path relative = fs::path(path).lexically_normal().lexically_relative(root).parent_path();
    for (; !relative.empty(); relative = relative.parent_path()) touched.insert(relative.generic_string());
  }
  return touched;
}

// Where a stale file is named: the outermost folder of its path this run wrote nothing into
// ("layer_4/"), else its own folder (where it is listed beside this run's files).
std::string group_of(const std::string& path, const std::set<std::string>& touched) {
  fs::path prefix;
  for (const fs::path& part : fs::path(path).parent_path()) {
    prefix /= part;
    if (!touched.count(prefix.generic_string())) return prefix.generic_string() + "/";
  }
  return fs::path(path).parent_path().generic_string();
}

// "layer_4/ (9 files)" for a folder this run did not touch; "index.html" or "a, b" for up to
// three files, else "first … last (n files)".
std::string describe_group(const std::string& group, const std::vector<std::string>& files) {
  if (!group.empty() && group.back() == '/') return group + " (" + counted(static_cast<long long>(files.size()), "file") + ")";
  if (files.size() <= 3) {
    std::string text;
    for (const std::string& file : files) text += (text.empty() ? "" : ", ") + file;
    return text;
  }
  return files.front() + " \u2026 " + files.back() + " (" + counted(static_cast<long long>(files.size()), "file") + ")";
}

}  // namespace

void warn_about_stale_outputs(const std::string& folder, const std::vector<std::string>& written,
                              std::vector<std::string>& warnings) {
  const std::vector<std::string> stale = stale_outputs(folder, written);
  if (stale.empty()) return;
  const std::set<std::string> touched = folders_written(fs::path(folder).lexically_normal(), written);
  std::vector<std::pair<std::string, std::vector<std::string>>> groups;  // in the order first met
  for (const std::string& path : stale) {
    const std::string group = group_of(path, touched);
    const auto it = std::find_if(groups.begin(), groups.end(), [&](const auto& g) { return g.first == group; });
    (it == groups.end() ? groups.emplace_back(group, std::vector<std::string>()).second : it->second).push_back(path);
  }
  // The top folder's files and whole folders first, then the stragglers beside this run's files.
  std::stable_partition(groups.begin(), groups.end(),
                        [](const auto& g) { return g.first.empty() || g.first.back() == '/'; });
  constexpr std::size_t kMaxGroups = 10;
  std::string list;
  for (std::size_t i = 0; i < groups.size() && i < kMaxGroups; ++i) list += (i ? ", " : "") + describe_group(groups[i].first, groups[i].second);
  if (groups.size() > kMaxGroups) list += " \u2026 and " + counted(static_cast<long long>(groups.size() - kMaxGroups), "more folder", "more folders");
  const bool one = stale.size() == 1;
  warnings.push_back(folder + " already holds " + counted(static_cast<long long>(stale.size()), "file") +
                     " from an earlier run that this run did not write, so " + (one ? "it is" : "they are") + " not from it: " + list);
}

void commit_folder(OutputSet& files, const std::string& folder, std::vector<std::string>& warnings,
                   const std::vector<std::string>& also) {
  files.commit();
  std::vector<std::string> written = files.paths();
  written.insert(written.end(), also.begin(), also.end());
  warn_about_stale_outputs(folder, written, warnings);
}

void warn_about_stale_formats(const std::string& figure, const std::vector<std::string>& written,
                              std::vector<std::string>& warnings) {
  if (figure.empty()) return;
  std::set<std::string> ours;
  for (const std::string& path : written) ours.insert(fs::path(path).lexically_normal().string());
  std::vector<std::string> stale, ours_here;
  for (const char* extension : {".png", ".svg", ".html"}) {
    const std::string sibling = fs::path(figure).replace_extension(extension).string();
    std::error_code ec;
    if (ours.count(fs::path(sibling).lexically_normal().string())) ours_here.push_back(fs::path(sibling).filename().string());
    else if (fs::is_regular_file(sibling, ec)) stale.push_back(sibling);
  }
  if (stale.empty()) return;
  const auto joined = [](const std::vector<std::string>& names) {
    std::string text;
    for (std::size_t i = 0; i < names.size(); ++i) text += (i == 0 ? "" : i + 1 == names.size() ? " and " : ", ") + names[i];
    return text;
  };
  const bool one = stale.size() == 1;
  warnings.push_back(joined(stale) + (one ? " is" : " are") + " from an earlier run: this run wrote the figure as " + joined(ours_here) +
                     ", so " + (one ? "it is" : "they are") + " not from it");
}

}  // namespace attnviz
