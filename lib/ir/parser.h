// The .tir text form (DESIGN.md §4): parser. print_graph(parse_tir(t)) == t for canonical text.
#pragma once

#include "ir/ir.h"

#include <memory>
#include <string>

namespace tt {

// Parses one graph. `filename` is used in messages ("file.tir:3:14: expected ')'") and to resolve
// external("x.pth") weights relative to the file. Throws tt::Error(BadInput) on syntax errors.
std::unique_ptr<Graph> parse_tir(const std::string& text, const std::string& filename = "<input>");

}  // namespace tt
