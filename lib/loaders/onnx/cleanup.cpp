// The dead-code sweep at the end of the import (Importer::run).
#include "loaders/onnx/importer.h"

#if TT_HAVE_ONNX

#include <set>

namespace tt::onnx_import {

// Removes nodes whose results are unused (replaced patterns, unused constants).
void Importer::sweep() {
  std::vector<Node*> nodes = g_->block()->nodes();
  for (auto it = nodes.rbegin(); it != nodes.rend(); ++it) {
    Node* n = *it;
    bool used = false;
    for (Value* v : n->outputs()) used = used || v->has_uses();
    if (!used) n->destroy();
  }
  // Weights that no node reads any more.
  std::set<std::string> read;
  for (Node* n : g_->all_nodes())
    for (const auto& w : n->weights()) read.insert(w.second);
  std::vector<std::string> names = g_->weights().names();
  for (const auto& name : names)
    if (!read.count(name)) g_->weights().erase(name);
}

}  // namespace tt::onnx_import

#endif  // TT_HAVE_ONNX
