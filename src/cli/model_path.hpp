// What --model names, checked before any reader opens it (issue 34 §2): a GGUF file, or a model
// folder (Hugging Face, CTranslate2). A file of a folder given instead of the folder, or a folder
// that holds only GGUF files, is named with what to pass.
#pragma once

#include <string>

namespace attnviz {

/// Throws UsageError naming --model when `model` is
///  - one file of a Hugging Face folder (model.safetensors, model-00001-of-00002.safetensors,
///    model.safetensors.index.json, config.json, tokenizer.json, tokenizer_config.json,
///    generation_config.json) or of a CTranslate2 folder (model.bin, *vocabulary*.txt|json): "give the
///    folder", naming it;
///  - a folder that is no model folder but holds GGUF files: the one to pass ("--model DIR/x.gguf"),
///    or all of them (up to 8) when there are several.
/// Anything else (a GGUF file, a model folder, a path that does not exist) is left to the readers.
void check_model_path(const std::string& model);

}  // namespace attnviz
