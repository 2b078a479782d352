#include "render/system_fonts.hpp"

#include <fontconfig/fontconfig.h>

#include <cstdlib>
#include <mutex>
#include <new>

#include "core/error.hpp"

namespace attnviz {

namespace {

// Older fontconfig versions are not thread-safe everywhere: every call goes through this lock.
std::mutex g_fontconfig_mutex;

// Registered before the first configuration is made, so that it runs after the destructors of
// the static objects holding one (atexit order is the reverse of registration).
void release_fontconfig_at_exit() {
  static const bool registered = std::atexit([] { FcFini(); }) == 0;
  static_cast<void>(registered);
}

}  // namespace

struct FallbackFonts::Impl {
  FcConfig* config = nullptr;  // null: fontconfig could not be initialised, nothing is found
  std::string description;
  ~Impl() {
    const std::lock_guard<std::mutex> lock(g_fontconfig_mutex);
    if (config != nullptr) FcConfigDestroy(config);
  }
};

FallbackFonts::FallbackFonts(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
FallbackFonts::~FallbackFonts() = default;

std::shared_ptr<const FallbackFonts> FallbackFonts::installed() {
  release_fontconfig_at_exit();
  static const std::shared_ptr<const FallbackFonts> machine = [] {
    auto impl = std::make_unique<Impl>();
    impl->description = "any installed font";
    const std::lock_guard<std::mutex> lock(g_fontconfig_mutex);
    impl->config = FcInitLoadConfigAndFonts();
    return std::shared_ptr<const FallbackFonts>(new FallbackFonts(std::move(impl)));
  }();
  return machine;
}

std::shared_ptr<const FallbackFonts> FallbackFonts::only(const std::vector<std::string>& files) {
  release_fontconfig_at_exit();
  auto impl = std::make_unique<Impl>();
  impl->description = files.empty() ? "no fallback font" : "the fallback fonts ";
  const std::lock_guard<std::mutex> lock(g_fontconfig_mutex);
  impl->config = FcConfigCreate();
  if (impl->config == nullptr) throw std::bad_alloc();
  for (const std::string& file : files) {
    // On a throw, impl's destructor releases the configuration after the lock is released.
    if (!FcConfigAppFontAddFile(impl->config, reinterpret_cast<const FcChar8*>(file.c_str()))) {
      throw InputError::unreadable(file, "fontconfig cannot read it as a font");
    }
    impl->description += (&file == &files.front() ? "" : ", ") + file;
  }
  return std::shared_ptr<const FallbackFonts>(new FallbackFonts(std::move(impl)));
}

const std::string& FallbackFonts::description() const { return impl_->description; }

std::vector<std::string> FallbackFonts::fonts_for(char32_t code_point) const {
  const std::lock_guard<std::mutex> lock(g_fontconfig_mutex);
  std::vector<std::string> files;
  FcConfig* const fc = impl_->config;
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
