// --input-shape SPEC: "1,3,224,224" (float32) or "1,128:int64".
#pragma once

#include "ir/ir.h"

#include <string>
#include <vector>

namespace tt {

struct InputSpec {
  std::vector<int64_t> shape;
  DType dtype = DType::F32;
  std::string str() const;  // canonical "1,3,224,224:float32"
};

// Throws tt::Error(Usage) with what is wrong ("'abc' is not a dimension") and the expected form.
InputSpec parse_input_spec(const std::string& spec);

}  // namespace tt
