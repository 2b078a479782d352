// How a run's pictures look, what they show and which files they are written as: the options every
// figure of render/ reads (--cmap, --scale, --cols, --max-size, --annotate, --font, --format, --measure). The command
// line's Options is one of these (cli/options.hpp), so a second front end fills these alone.
#pragma once

#include <optional>
#include <string>
#include <vector>

namespace attnviz {

/// The picture options of a run; each field's meaning is its --help text (cli/command_line.cpp).
struct PictureSettings {
  std::string cmap;                  ///< "" = viridis (compare's differences: rdbu)
  std::string scale = "fixed";      ///< fixed | head | layer | shared | log (layer: shared over a layer's heads)
  int cols = 0;                      ///< 0 = near-square grid
  int max_size_px = 4096;
  bool annotate = false;
  std::vector<std::string> fonts;    ///< empty = the default font
  /// Where characters no label font has are looked for: unset = the installed fonts (fontconfig);
  /// set = only these files (no flag: tests pin their fonts so, whatever the machine has).
  std::optional<std::vector<std::string>> fallback_fonts;
  std::vector<std::string> formats = {"png"};  ///< --format: any of png, svg, html, each once
  std::string measure = "weights";   ///< --measure weights|norms|alti (analysis/value_norms, analysis/alti)
};

/// The pictures of a whole model beside its heatmaps (overview.png, rollout.png, flow.png): the picture
/// options and what the run adds to them. Each field's meaning is its --help text.
struct ModelPictureSettings : PictureSettings {
  bool rollout = false;              ///< --rollout: attention rollout (dump field, rollout.png)
  double rollout_residual = 0.5;     ///< --rollout-residual: α in Â = (1 − α)·mean_h(A) + α·I
  bool flow = false;                 ///< --flow: attention flow (dump field, flow.png); needs --model
  int threads = 0;                   ///< 0 = all cores
};

}  // namespace attnviz
