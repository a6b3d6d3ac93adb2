// The .tir text form (DESIGN.md §4): printer.
#pragma once

#include "ir/ir.h"

#include <string>

namespace tt {

struct PrintOptions {
  enum class Weights {
    Declare,   // "name : f32[64,3,7,7] param" only
    Inline,    // values written out (small tests)
    External,  // = external("<weights_file>")
  };
  Weights weights = Weights::Declare;
  std::string weights_file;  // for External: path relative to the .tir file
  bool print_weights_section = true;
};

std::string print_graph(const Graph& g, const PrintOptions& opts = {});
std::string print_node(const Node& n);  // one line (nested blocks included), no trailing newline

}  // namespace tt
