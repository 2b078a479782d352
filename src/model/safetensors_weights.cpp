#include "model/safetensors_weights.hpp"

#include <algorithm>
#include <set>

#include "core/error.hpp"
#include "model/formats/safetensors_set.hpp"

namespace attnviz {

namespace {

std::string shape_text(const std::vector<std::int64_t>& shape) {
  std::string text = "[";
  for (std::size_t i = 0; i < shape.size(); ++i) text += (i ? ", " : "") + std::to_string(shape[i]);
  return text + "]";
}

// A tensor the model asked for, as found: under its own name, as an alias, or through the tie.
struct Resolved {
  std::string name;       // the folder's name asked for (after renaming)
  FoundTensor found;      // empty: missing
  std::string tied_to;    // the tie's other name, when that is what was found
};

// What a message calls a resolved tensor: "tensor lm_head.weight", and how it was reached when
// the bytes are stored under another name, so that both names are read.
std::string tensor_words(const Resolved& r) {
  std::string text = "tensor " + r.name;
  if (!r.tied_to.empty()) text += " (absent; config.json's tie_word_embeddings ties it to " + r.tied_to + ")";
  if (!r.found.aliases.empty()) {
    std::string chain;
    for (std::size_t i = 1; i < r.found.aliases.size(); ++i) chain += r.found.aliases[i] + " -> ";
    text += " (" + (r.tied_to.empty() ? std::string("an alias") : r.tied_to + " is an alias") + " of " + chain + r.found.tensor->name +
            " in __metadata__)";
  }
  return text;
}

class SafetensorsWeights : public WeightSource {
 public:
  SafetensorsWeights(const std::string& folder, SafetensorsNaming naming) : naming_(std::move(naming)), set_(folder) { check_tie(); }

  Matrix matrix(const std::string& name, long rows, long cols) const override {
    const Resolved r = lookup(name);
    const SafetensorsFile& file = *r.found.file;
    if (transposed(name)) {  // Conv1D's [in, out]
      if (r.found.tensor->shape != std::vector<std::int64_t>{cols, rows})
        throw InputError::inconsistent(file.path(), tensor_words(r) + ": expected shape " + shape_string(cols, rows) +
                                                        " (Conv1D [in, out], config.json), got " + shape_text(r.found.tensor->shape));
      return file.matrix(*r.found.tensor).transpose();
    }
    if (r.found.tensor->shape != std::vector<std::int64_t>{rows, cols})
      throw InputError::inconsistent(file.path(), tensor_words(r) + ": expected shape " + shape_string(rows, cols) +
                                                      " (config.json), got " + shape_text(r.found.tensor->shape));
    return file.matrix(*r.found.tensor);
  }
  Vector vector(const std::string& name, long n) const override {
    const Resolved r = lookup(name);
    if (r.found.tensor->shape != std::vector<std::int64_t>{n})
      throw InputError::inconsistent(r.found.file->path(), tensor_words(r) + ": expected shape [" + std::to_string(n) +
                                                               "] (config.json), got " + shape_text(r.found.tensor->shape));
    const Matrix values = r.found.file->matrix(*r.found.tensor);
    Vector v = Eigen::Map<const Vector>(values.data(), values.size());
    // Gemma's norms multiply by 1 + w; llama.cpp's converter writes 1 + w, and so does this.
    if (naming_.norm_plus_one && name.size() > 11 && name.compare(name.size() - 11, 11, "norm.weight") == 0) v.array() += 1.0f;
    return v;
  }
  bool has(const std::string& name) const override { return static_cast<bool>(resolve(name).found); }
  std::vector<std::int64_t> shape(const std::string& name) const override {
    const Resolved r = resolve(name);
    if (!r.found) return {};
    std::vector<std::int64_t> shape = r.found.tensor->shape;
    if (transposed(name)) std::reverse(shape.begin(), shape.end());
    return shape;
  }
  std::vector<std::string> unread(const std::set<std::string>& read) const override {
    std::set<std::string> stored;
    for (const std::string& name : read)
      if (const Resolved r = resolve(name); r.found) stored.insert(r.found.tensor->name);
    std::vector<std::string> names;
    for (const auto& file : set_.files())
      for (const auto& [name, tensor] : file->tensors())
        if (!stored.count(name)) names.push_back(name);
    return names;
  }
  std::string describe(const std::string& name) const override {
    const Resolved r = resolve(name);
    if (r.found) return r.found.file->path() + ": " + tensor_words(r);
    return set_.path() + ": tensor " + r.name + missing_partner(r.name);
  }

 private:
  // The tensor stored (or aliased) under `folder_name`, with or without the optional prefix.
  FoundTensor find(const std::string& folder_name) const {
    if (FoundTensor found = set_.find(folder_name)) return found;
    if (!naming_.optional_prefix.empty()) return set_.find(naming_.optional_prefix + folder_name);
    return {};
  }
  // The other name of the tie when `folder_name` is one of its two names, else "".
  std::string partner(const std::string& folder_name) const {
    const TiedNames& t = naming_.tie;
    if (t.embedding.empty() || t.output.empty()) return "";
    return folder_name == t.embedding ? t.output : folder_name == t.output ? t.embedding : "";
  }
  // The name as the folder spells it where found (with the optional prefix when stored so).
  static std::string found_name(const FoundTensor& found) {
    return found.aliases.empty() ? found.tensor->name : found.aliases.front();
  }
  Resolved resolve(const std::string& name) const {
    Resolved r{naming_.rename(name), {}, ""};
    if ((r.found = find(r.name))) {
      r.name = found_name(r.found);
      return r;
    }
    const std::string other = partner(r.name);
    if (naming_.tie.tied && !other.empty() && (r.found = find(other))) r.tied_to = found_name(r.found);
    return r;
  }
  Resolved lookup(const std::string& name) const {
    Resolved r = resolve(name);
    if (!r.found) throw InputError::inconsistent(set_.path(), "missing tensor " + r.name + missing_partner(r.name));
    return r;
  }
  // For a missing tensor of the tie, what its other name says: it is missing too, or it is
  // stored but config.json does not let it stand in.
  std::string missing_partner(const std::string& folder_name) const {
    const std::string other = partner(folder_name);
    if (other.empty()) return "";
    if (naming_.tie.tied) return " (nor " + other + ", which config.json's tie_word_embeddings ties to it)";
    if (find(other)) return " (" + other + " is stored, but config.json's tie_word_embeddings is false, so it does not stand in)";
    return "";
  }
  // Two stored tensors joined by the tie are one matrix: their shapes must agree.
  void check_tie() const {
    const TiedNames& t = naming_.tie;
    if (!t.tied || t.embedding.empty() || t.output.empty()) return;
    const Resolved embedding{t.embedding, find(t.embedding), ""}, output{t.output, find(t.output), ""};
    if (!embedding.found || !output.found || embedding.found.tensor == output.found.tensor ||
        embedding.found.tensor->shape == output.found.tensor->shape)
      return;
    throw InputError::inconsistent(output.found.file->path(), tensor_words(embedding) + " " + shape_text(embedding.found.tensor->shape) +
                                                                  " and " + tensor_words(output) + " " + shape_text(output.found.tensor->shape) +
                                                                  " have different shapes, but config.json's tie_word_embeddings makes them one matrix");
  }
  bool transposed(const std::string& name) const {
    const std::size_t dot = name.rfind("blk.", 0) == 0 ? name.find('.', 4) : std::string::npos;
    const std::string tensor = dot == std::string::npos ? name : name.substr(dot + 1);
    return std::find(naming_.transposed.begin(), naming_.transposed.end(), tensor) != naming_.transposed.end();
  }

  SafetensorsNaming naming_;
  SafetensorsSet set_;
};

}  // namespace

std::unique_ptr<WeightSource> safetensors_weights(const std::string& folder, SafetensorsNaming naming) {
  return std::make_unique<SafetensorsWeights>(folder, std::move(naming));
}

}  // namespace attnviz
