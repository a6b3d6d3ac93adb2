// Matchers on IR nodes that need nothing but the IR and the op table: the ATen ops a node
// lowers to (calls_aten), module ops, constants, producers. Nothing here changes the graph; the
// passes get them through passes/pass_util.h, the analyses in lib/ir use them directly.
#include "ir/match.h"

#include "ir/op_table.h"

#include <algorithm>
#include <unordered_map>

namespace tt {

std::string aten_base(std::string_view q) {
  size_t ns = q.find("::");
  size_t dot = q.find('.', ns == std::string_view::npos ? 0 : ns + 2);
  return std::string(dot == std::string_view::npos ? q : q.substr(0, dot));
}

const std::vector<std::string>& aten_bases(const std::string& op) {
  // The cache only grows by op names seen in graphs; one per thread, as the emitters may read a
  // graph from two (Note [Emitters in parallel] in lib/driver/convert.cpp).
  thread_local std::unordered_map<std::string, std::vector<std::string>> cache;
  auto it = cache.find(op);
  if (it != cache.end()) return it->second;
  std::vector<std::string> bases;
  if (op.rfind("aten::", 0) == 0) {
    bases.push_back(aten_base(op));
  } else if (const OpInfo* info = find_op(op)) {
    if (info->kind != OpKind::Module && info->kind != OpKind::Prim)
      for (const auto& a : info->aten) {
        std::string b = aten_base(a);
        if (std::find(bases.begin(), bases.end(), b) == bases.end()) bases.push_back(b);
      }
  } else if (op.rfind("nn.", 0) != 0 && op.rfind("prim.", 0) != 0) {
    for (const char* prefix : {"Tensor.", "torch.", "F."}) {
      std::string p = prefix;
      if (op.rfind(p, 0) == 0 && op.size() > p.size()) {
        bases.push_back("aten::" + op.substr(p.size()));
        break;
      }
    }
  }
  return cache.emplace(op, std::move(bases)).first->second;
}

bool calls_aten(const Node* n, std::string_view base) {
  for (const auto& b : aten_bases(n->op()))
    if (b == base) return true;
  return false;
}

bool is_module_op(const Node* n) {
  if (!n->module().empty()) return true;
  if (n->op().rfind("nn.", 0) == 0) return true;
  const OpInfo* info = n->info();
  return info && info->kind == OpKind::Module;
}

std::optional<int64_t> const_int(const Value* v) {
  const AttrValue* a = v->constant();
  if (!a) return std::nullopt;
  if (const auto* i = std::get_if<int64_t>(a)) return *i;
  return std::nullopt;
}

std::optional<double> const_float(const Value* v) {
  const AttrValue* a = v->constant();
  if (!a) return std::nullopt;
  if (const auto* d = std::get_if<double>(a)) return *d;
  if (const auto* i = std::get_if<int64_t>(a)) return static_cast<double>(*i);
  return std::nullopt;
}

std::optional<bool> const_bool(const Value* v) {
  const AttrValue* a = v->constant();
  if (!a) return std::nullopt;
  if (const auto* b = std::get_if<bool>(a)) return *b;
  return std::nullopt;
}

bool const_is_none(const Value* v) {
  const AttrValue* a = v->constant();
  return a && std::holds_alternative<NoneAttr>(*a);
}

std::optional<DType> const_dtype(const Value* v) {
  const AttrValue* a = v->constant();
  if (!a) return std::nullopt;
  if (const auto* d = std::get_if<DType>(a)) return *d;
  if (const auto* i = std::get_if<int64_t>(a))
    if (v->type().kind == Type::Kind::ScalarType) {
      DType d = dtype_from_scalar_type(*i);
      if (d != DType::Unknown) return d;
    }
  return std::nullopt;
}

Node* producer_is(const Value* v, const char* op) {
  Node* p = v->node();
  if (!p || p->op() != op) return nullptr;
  return p;
}

}  // namespace tt
