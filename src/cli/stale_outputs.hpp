// Files an earlier run left in an output folder. attnviz never deletes a file it did not write,
// so a run into a folder that already holds, say, an index.html or layer_4/ of a run with other
// options says which files are not its own: a reader would otherwise take them for this run's.
#pragma once

#include <string>
#include <vector>

#include "io/atomic_output.hpp"

namespace attnviz {

/// The files under `folder` named as attnviz names its outputs (grid.png, head_3.svg,
/// index.html, overview.png, attribution.json, census.csv, texts.jsonl, layer_2/…, encoder/…) that are not
/// among `written` (the paths this run wrote, each under `folder`). Paths relative to `folder`,
/// in natural order (head_2 before head_10). Only folders attnviz makes (layer_<l>, encoder,
/// decoder, self, cross) are entered; any other file is the user's and is not looked at.
std::vector<std::string> stale_outputs(const std::string& folder, const std::vector<std::string>& written);

/// Adds to `warnings` one warning naming stale_outputs(folder, written), when there are any. A
/// folder this run wrote nothing into is named once with its count ("layer_4/ (9 files)"); the
/// stale files of a folder it wrote into are listed up to three, else as "first … last (n
/// files)"; past ten such groups the rest are counted. Called after the run's files are written.
void warn_about_stale_outputs(const std::string& folder, const std::vector<std::string>& written,
                              std::vector<std::string>& warnings);

/// How every command that writes a folder ends (heatmaps, render, attribute, explain, census, and
/// any new one): commits `files` (OutputSet::commit), then warn_about_stale_outputs(folder, the
/// files' paths and `also`), so that each names an earlier run's files in the same one warning.
/// `also`: files of `folder` this run wrote outside `files` (a census's journal).
void commit_folder(OutputSet& files, const std::string& folder, std::vector<std::string>& warnings,
                   const std::vector<std::string>& also = {});

/// The same for a figure written as one file per format (compare's -o x.png, with x.svg and
/// x.html beside it for --format svg,html): `figure`'s .png, .svg and .html siblings that exist
/// but are not among `written` are named in one warning. Nothing when `figure` is "".
void warn_about_stale_formats(const std::string& figure, const std::vector<std::string>& written,
                              std::vector<std::string>& warnings);

}  // namespace attnviz
