// All-or-nothing output: every file of a run is rendered in memory first, then written to a
// temporary name in its destination folder and renamed into place (ninja's ReplaceContent,
// LevelDB's SetCurrentFile). On any failure, or SIGINT/SIGTERM, no temporary is left behind
// and no destination is touched unless all temporaries were written. A long run may write its
// finished files' temporaries ahead (OutputSet::write_ahead); they are renamed with the rest.
#pragma once

#include <string>
#include <vector>

namespace attnviz {

/// Throws OutputError::cannot_write(output, …) when the existing file `output` is one of
/// `inputs` (the same file, through any link). Used by OutputSet::commit, and before a run so
/// that a long computation does not end in this refusal.
void refuse_input_as_output(const std::string& output, const std::vector<std::string>& inputs);

/// Throws OutputError::cannot_write(output, …) when `folder`, or the nearest of its parents
/// that exists, is not a folder ("is a file, not a folder", or "<parent> is a file, not a
/// folder"): no folder can be made there. `output` is what needs the folder (the folder itself,
/// or a file to be written into it). Used by OutputSet::commit, and before a run so that a long
/// computation does not end in this refusal.
void require_creatable_folder(const std::string& folder, const std::string& output);

/// The checks OutputSet::commit makes before it writes anything, for callers that must know
/// before a long run: a path that is a folder or not a regular file, a path named twice, a
/// path that is one of `inputs`. Throws OutputError naming the path.
void check_output_targets(const std::vector<std::string>& paths, const std::vector<std::string>& inputs);

/// A set of files to write together.
class OutputSet {
 public:
  OutputSet() = default;
  /// Removes what write_ahead() wrote (temporaries, and the folders it made) unless commit()
  /// renamed them into place: a run that fails after writing ahead leaves nothing behind.
  ~OutputSet();
  OutputSet(OutputSet&& other) noexcept;
  OutputSet& operator=(OutputSet&& other) noexcept;
  OutputSet(const OutputSet&) = delete;
  OutputSet& operator=(const OutputSet&) = delete;

  /// Queues `bytes` for `path`. Nothing touches the disk before commit().
  void add(std::string path, std::string bytes);
  /// Queues the file whose bytes are `pieces` one after another (a model dump, its layers each
  /// formatted as it was computed), without joining them in memory.
  void add(std::string path, std::vector<std::string> pieces);

  /// Creates `directory` (and missing parents) at commit time, before the files, even if no
  /// file is added to it.
  void create_directory(std::string directory);

  /// Moves every file and folder of `other` into this set (a model run's layers, each
  /// rendered into a set of its own, are written together). Requires: nothing of `other` was
  /// written ahead.
  void append(OutputSet&& other);

  /// Files that must not be replaced (the run's inputs): commit() refuses an output that is
  /// one of them, before writing anything.
  void protect(std::vector<std::string> inputs);

  /// Creates the missing folders of every file (one rule for every output of every command),
  /// writes every file to "<dir>/.<name>.tmp-<pid>-<n>", then renames each into place.
  /// Throws OutputError naming the path that failed; temporaries, and the folders it created,
  /// are removed first. Refuses,
  /// before writing, two outputs with the same path, an output that is a protected input, and
  /// an existing target that is not a regular file (a device, FIFO, link or folder: rename()
  /// would replace the node itself).
  void commit();

  /// Does commit()'s checks and writes for the files added so far, under their temporary names
  /// (created folders included), without renaming any: commit() then writes only the files
  /// added since and renames all. A model run writes each layer's pictures so while its
  /// workers make the next layer's (issue 38). Throws what commit() would, after removing what
  /// it wrote; protect() must come first.
  void write_ahead();

  /// For a file too large to hold (a safetensors dump, written layer by layer): queues `path`
  /// empty and writes it ahead (its folders made, its temporary registered for removal on a
  /// failure or a signal), then returns the temporary's name for the caller to fill. commit()
  /// renames it into place with the rest. Throws what write_ahead() would.
  std::string stream_ahead(std::string path);

  const std::vector<std::string>& paths() const { return paths_; }

 private:
  std::vector<std::string> paths_;
  std::vector<std::vector<std::string>> contents_;  // each file's pieces
  std::vector<std::string> protected_;
  std::vector<std::string> directories_;
  // Written ahead and not yet renamed: temporaries_[i] holds paths_[i]; the folders made for them.
  std::vector<std::string> temporaries_;
  std::vector<std::string> created_;
  int registered_from_ = -1;          // this set's first slot in the signal handler's list, or -1
  int folders_registered_from_ = -1;  // the same for its folders

  void write_temporaries();
  void forget_written() noexcept;  // drops what was written ahead from this set and the signal handler's lists
  void remove_written() noexcept;  // removes it from disk, then forgets it
};

}  // namespace attnviz
