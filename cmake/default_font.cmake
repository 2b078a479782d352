# ATTNVIZ_DEFAULT_FONT: DejaVu Sans, the font labels use when --font is not given, found where
# each system's package puts it: Debian and Ubuntu (fonts-dejavu-core), Fedora
# (dejavu-sans-fonts), Arch (ttf-dejavu), FreeBSD and Homebrew's share/fonts, and macOS font
# folders (Homebrew's cask font-dejavu installs into ~/Library/Fonts). -DATTNVIZ_DEFAULT_FONT=FILE
# names another file.
find_file(ATTNVIZ_DEFAULT_FONT DejaVuSans.ttf
          PATHS /usr/share/fonts/truetype/dejavu /usr/share/fonts/dejavu-sans-fonts /usr/share/fonts/dejavu
                /usr/share/fonts/TTF /usr/local/share/fonts/dejavu /usr/local/share/fonts/TTF /opt/homebrew/share/fonts
                /usr/local/share/fonts "$ENV{HOME}/Library/Fonts" /Library/Fonts
          NO_DEFAULT_PATH
          DOC "Font used for labels when --font is not given (DejaVu Sans)")
if(NOT ATTNVIZ_DEFAULT_FONT)
  message(FATAL_ERROR "DejaVuSans.ttf not found: install fonts-dejavu-core (Debian, Ubuntu), dejavu-sans-fonts "
                      "(Fedora) or the Homebrew cask font-dejavu (macOS), or pass -DATTNVIZ_DEFAULT_FONT=/path/to/DejaVuSans.ttf")
endif()
message(STATUS "default font: ${ATTNVIZ_DEFAULT_FONT}")
