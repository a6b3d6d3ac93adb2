// Helpers shared by the quant-stubs and float-fallback passes: fresh stub module paths and
// inserting a QuantStub / DeQuantStub module node.
#pragma once

#include "ir/ir.h"

#include <string>
#include <unordered_set>

namespace tt {

// Fresh module paths for stubs: "quant", "quant_1", ... used by no module and no weight (so the
// generated class never has two attributes of the same name).
class StubNamer {
 public:
  explicit StubNamer(const Graph& g) {
    for (const Node* n : g.all_nodes())
      if (!n->module().empty()) taken_.insert(first_component(n->module()));
    for (const auto& w : g.weights().names()) taken_.insert(first_component(w));
  }
  std::string fresh(const std::string& base) {
    std::string p = base;
    for (int i = 1; taken_.count(p); ++i) p = base + "_" + std::to_string(i);
    taken_.insert(p);
    return p;
  }

 private:
  static std::string first_component(const std::string& s) { return s.substr(0, s.find('.')); }
  std::unordered_set<std::string> taken_;
};

// Inserts `op`(v) before `pos` (appends to `b` when pos is nullptr) as module `path`; the result
// has v's type and is named after the path. Provenance from `prov` when given.
inline Node* insert_stub(Graph& g, const char* op, Value* v, const std::string& path, Block* b,
                         Node* pos, const Node* prov) {
  Node* s = g.create(op, {v}, 0);
  if (pos)
    s->insert_before(pos);
  else
    b->append(s);
  s->add_output(v->type(), path);
  s->set_module(path);
  if (prov) s->copy_provenance(prov);
  return s;
}

}  // namespace tt
