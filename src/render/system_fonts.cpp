#include "render/system_fonts.hpp"

#include <fontconfig/fontconfig.h>

#include <cstdlib>
#include <memory>
#include <mutex>

namespace attnviz {

namespace {

// fontconfig's configuration, loaded once and released at exit with fontconfig's own state
// (FcFini), so that leak checkers see nothing left; calls into it are serialised (older
// fontconfig versions are not thread-safe everywhere).
FcConfig* config() {
  static FcConfig* const loaded = [] {
    FcConfig* const created = FcInitLoadConfigAndFonts();
    std::atexit([] {
      if (config() != nullptr) FcConfigDestroy(config());
      FcFini();
    });
    return created;
  }();
  return loaded;
}

std::mutex g_fontconfig_mutex;

}  // namespace

std::vector<std::string> system_fonts_for(char32_t code_point) {
  const std::lock_guard<std::mutex> lock(g_fontconfig_mutex);
  std::vector<std::string> files;
  FcConfig* const fc = config();
  if (fc == nullptr) return files;
  const std::unique_ptr<FcPattern, decltype(&FcPatternDestroy)> pattern(FcPatternCreate(), FcPatternDestroy);
  const std::unique_ptr<FcCharSet, decltype(&FcCharSetDestroy)> wanted(FcCharSetCreate(), FcCharSetDestroy);
  if (!pattern || !wanted) return files;
  FcCharSetAddChar(wanted.get(), static_cast<FcChar32>(code_point));
  FcPatternAddCharSet(pattern.get(), FC_CHARSET, wanted.get());
  FcPatternAddBool(pattern.get(), FC_SCALABLE, FcTrue);
  FcConfigSubstitute(fc, pattern.get(), FcMatchPattern);
  FcDefaultSubstitute(pattern.get());
  FcResult result = FcResultNoMatch;
  const std::unique_ptr<FcFontSet, decltype(&FcFontSetDestroy)> sorted(
      FcFontSort(fc, pattern.get(), FcFalse, nullptr, &result), FcFontSetDestroy);
  if (!sorted) return files;
  for (int i = 0; i < sorted->nfont; ++i) {
    FcPattern* font = sorted->fonts[i];
    FcCharSet* covered = nullptr;
    FcChar8* file = nullptr;
    int index = 0;
    if (FcPatternGetCharSet(font, FC_CHARSET, 0, &covered) != FcResultMatch ||
        !FcCharSetHasChar(covered, static_cast<FcChar32>(code_point)) ||
        FcPatternGetString(font, FC_FILE, 0, &file) != FcResultMatch) {
      continue;
    }
    if (FcPatternGetInteger(font, FC_INDEX, 0, &index) == FcResultMatch && index != 0) continue;
    files.emplace_back(reinterpret_cast<const char*>(file));
  }
  return files;
}

}  // namespace attnviz
