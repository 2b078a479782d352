// Which root members of attnviz's input files (docs/input-files.md) are read, for a file in the
// roles it plays in one run: a member no role reads is named in a warning, and one that would
// change the attention if it were read is refused. Does not read any member's value
// (input_schema does).
#pragma once

#include <string>
#include <vector>

namespace attnviz {

/// What one input file is read as in a run (a combined file is both), and its root members.
struct InputFileRoles {
  bool sentence = false;
  bool weights = false;
  std::vector<std::string> members;  ///< root member names, sorted
};

/// "FILE: ignoring /a, /b: not fields of attnviz's input files (…); not using /W_Q: this file is
/// read as a sentence file (OTHER)" for the members of `roles` that no role of the file reads:
/// unknown ones, and those of the role the file does not play here (`other_file` says which file
/// plays it, e.g. "the weights are w.json"). Documented metadata (description, source, licence,
/// license, sentence, source_sentence, target_output_tokens, reference_…) is not named. "" when
/// nothing is left over. Throws InputError naming the file and member for a member other tools
/// write that would change the attention but that attnviz does not implement (is_causal,
/// rope_theta, sliding_window, attn_logit_softcapping, alibi, alibi_slopes, attn_mask).
std::string unread_members_warning(const std::string& file, const InputFileRoles& roles, const std::string& other_file);

}  // namespace attnviz
