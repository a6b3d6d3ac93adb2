// Shared helpers of the analysis commands (inspect, diff, profile): loading a model with
// --input-shape applied, JSON pieces that all their documents share, and aligned text tables.
#pragma once

#include "loaders/loader.h"
#include "ir/input_spec.h"

#include <nlohmann/json.hpp>

#include <iosfwd>
#include <string>
#include <vector>

namespace tt {

// Gives the first specs.size() graph inputs the tensor types of `specs`. Inputs with a default
// may be left out from the end (Note [Forward defaults] in ir/ir.h), others not (Error(Usage));
// an input given a shape loses a default that is no tensor (None), with a warning in m.diags.
void apply_input_shapes(Model& m, const std::vector<InputSpec>& specs);

// Loads `path` (any format load_model knows). With `specs` (apply_input_shapes), sets the input
// types and, when `infer` is set, runs infer-shapes so every value has dtype and shape.
Model load_model_with_shapes(const std::string& path, const std::vector<InputSpec>& specs,
                             bool infer = true);

// {"path", "format", "sha256"} of a loaded model.
nlohmann::ordered_json source_json(const SourceInfo& s);
// {"name", "type", "dtype", "shape"} of a graph input/output (null dtype/shape when unknown).
nlohmann::ordered_json signature_json(const Value& v);
// Diagnostics as the report writes them ({"severity", "code", "message", "node", "scope", "loc"}).
nlohmann::ordered_json diagnostics_json(const Diagnostics& d);

// "11,689,512"
std::string group_digits(int64_t n);
// "44.6 MiB", "512 B"
std::string human_bytes(int64_t n);
// A quantized tensor's parameters (an entry of the report's `quantization` section) in a few
// words: "qu8 per_tensor_affine scale 0.0213 zp 3", "qi8 per_channel_affine axis 0: 64 scales
// 0.00121..0.00342, zero points 0".
std::string qparams_text(const nlohmann::ordered_json& q);
// Fixed-point text: fixed(3.14159, 2) == "3.14".
std::string fixed(double v, int decimals);
// "conv1.weight : f32[64,3,7,7]"-style type text of a tensor ("f32[64,3,7,7]").
std::string tensor_type_str(const at::Tensor& t);

// Plain-text table: columns padded to their widest cell; columns marked numeric are
// right-aligned. Written with two spaces between columns and `indent` spaces in front.
class TextTable {
 public:
  explicit TextTable(std::vector<std::string> header, std::vector<bool> numeric = {});
  void add(std::vector<std::string> row);
  size_t rows() const { return rows_.size(); }
  void print(std::ostream& os, int indent = 2) const;

 private:
  std::vector<std::string> header_;
  std::vector<bool> numeric_;
  std::vector<std::vector<std::string>> rows_;
};

}  // namespace tt
