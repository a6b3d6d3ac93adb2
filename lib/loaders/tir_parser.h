// The .tir text form (DESIGN.md §4): parser. print_graph(parse_tir(t)) == t for canonical text.
#pragma once

#include "ir/ir.h"

#include <memory>
#include <string>
#include <vector>

namespace tt {

// Parses one graph. `filename` is used in messages ("file.tir:3:14: expected ')'") and to resolve
// external("x.pth") weights relative to the file. Throws tt::Error(BadInput) on syntax errors.
std::unique_ptr<Graph> parse_tir(const std::string& text, const std::string& filename = "<input>");

// How parse_tir splits its work (Note [Weights parsed beside the graph] in tir_parser.cpp). The
// result is the same either way; tests set the threshold to exercise both paths.
struct TirParseOptions {
  // A weights section starting at least this many bytes into the text is parsed on a second
  // thread while the graph is parsed; 0 always does, SIZE_MAX never.
  size_t weights_thread_min_offset = size_t{8} << 20;
};
std::unique_ptr<Graph> parse_tir(const std::string& text, const std::string& filename,
                                 const TirParseOptions& options);

// Splits a file holding several cases separated by lines "// -----" (pass tests). Each case keeps
// the line numbers of the whole file (lines of earlier cases become blank), so parse errors of a
// case point at the right line.
std::vector<std::string> split_tir_cases(const std::string& text);

}  // namespace tt
