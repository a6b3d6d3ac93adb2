// Reading a torch.export archive (.pt2 of torch 2.6's torch.export.save): the program's JSON, the
// state_dict and constants as tensors, and the serialized schema's enums. JIT headers: include
// only from lib/loaders/.
#pragma once

#include <ATen/core/Tensor.h>
#include <c10/core/ScalarType.h>
#include <nlohmann/json.hpp>

#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace tt::pt2 {

using json = nlohmann::json;

// Throws BadInput: "malformed torch.export archive: <what> — re-export ...".
[[noreturn]] void malformed(const std::string& what);

// j[key]; malformed when j is not an object holding it.
const json& field(const json& j, const char* key);

// The one member of a serialized union ({"as_tensor": {...}}).
std::pair<std::string, const json*> union_member(const json& j);

// Where a torch.save'd artifact is in the .pt2 (its zip entry's bytes, a zip archive themselves).
struct ArtifactRange {
  uint64_t offset = 0, size = 0;  // size 0: absent
};

struct Archive {
  std::string path;
  json program;
  ArtifactRange state_dict, constants;
};

// The program and tensor files of the archive at `path` (at the top or under one folder); throws
// BadInput / Unsupported for other .pt2 layouts (AOTInductor packages, torch >= 2.7 packages).
Archive read_archive(const std::string& path);

// A torch.save'd dict of tensors (the state_dict or the constants) read from its range of the
// archive's file, its large storages mapped from the file (Note [Weights mapped from the
// archive]). torch.save pickles a Parameter as torch._utils._rebuild_parameter(data,
// requires_grad, hooks), which LibTorch's unpickler does not know: it is resolved to a stand-in
// class whose object keeps `data`, which is unwrapped.
std::vector<std::pair<std::string, at::Tensor>> load_tensor_dict(const std::string& path,
                                                                 const ArtifactRange& range,
                                                                 const std::string& what);

// Export's ScalarType / MemoryFormat / Layout enums (schema.py) -> c10's.
std::optional<c10::ScalarType> scalar_type(int64_t v);

}  // namespace tt::pt2
