// Where a character the chosen fonts lack is looked for, through fontconfig (the way desktop
// applications fall back): the machine's installed fonts, so that CJK labels draw with no flag
// when a CJK font such as fonts-noto-cjk is installed; or only named font files, so that a test
// finds the same fonts on every machine. Does not load or check the files (font.cpp does).
#pragma once

#include <memory>
#include <string>
#include <vector>

namespace attnviz {

/// A set of fonts that fontconfig matches missing characters against. Thread-safe: calls into
/// fontconfig are serialised. fontconfig's own state is released at exit (FcFini), after every
/// FallbackFonts held by a static object, so that leak checkers see nothing left.
class FallbackFonts {
 public:
  /// The fonts installed on this machine, as its fontconfig configuration lists them; loaded
  /// once and shared. Finds nothing when fontconfig cannot be initialised.
  static std::shared_ptr<const FallbackFonts> installed();
  /// Only `files` (font file paths), matched by fontconfig's own rules, whatever
  /// is installed. Throws InputError::unreadable naming a file fontconfig cannot read as a font.
  static std::shared_ptr<const FallbackFonts> only(const std::vector<std::string>& files);

  ~FallbackFonts();
  FallbackFonts(const FallbackFonts&) = delete;
  FallbackFonts& operator=(const FallbackFonts&) = delete;

  /// Scalable font files that cover `code_point`, best match first; only files whose first face
  /// (index 0) covers it (attnviz reads the first face of a collection).
  std::vector<std::string> fonts_for(char32_t code_point) const;
  /// What the set is, for messages: "any installed font", or "the fallback fonts A, B".
  const std::string& description() const;

 private:
  struct Impl;
  explicit FallbackFonts(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

}  // namespace attnviz
