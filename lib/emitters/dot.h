// Graphviz (DOT) picture of a graph: one box per op, module scopes as nested clusters, value
// types (shapes after infer-shapes) on the edges. Used by `convert --emit dot` and `inspect --dot`.
#pragma once

#include "ir/ir.h"

#include <optional>
#include <string>

namespace tt {

class OutputSet;

// The DOT text. Constants are not drawn (they would double the picture); their values are part
// of the consuming op's label when short. Nested blocks (prim.If/Loop) are drawn as one node.
std::string emit_dot(const Graph& g);

// Path of the `dot` program when it is on PATH, else nullopt.
std::optional<std::string> find_dot_program();

// Renders `dot_file` to SVG with Graphviz; returns the SVG text, or nullopt when `dot` is not
// installed. Throws tt::Error(Internal) when dot fails on our output.
std::optional<std::string> render_svg(const std::string& dot_file);

// Stages `dot_filename` (e.g. "model.dot") in `out`, and beside it the .svg when Graphviz is
// installed. Returns whether the .svg was staged.
bool write_dot_outputs(const Graph& g, OutputSet& out, const std::string& dot_filename);

}  // namespace tt
