// tinytrace IR: implementation of Graph / Block / Node / Value (see ir.h).
#include "ir/ir.h"

#include "ir/op_table.h"

#include "support/diag.h"

#include <ATen/ATen.h>

#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstdio>
#include <sstream>

namespace tt {

// ---------------------------------------------------------------------------------------------
// dtypes

namespace {
std::string quote(const std::string& s);  // a .tir string literal (defined with the attributes)

struct DTypeRow {
  DType d;
  const char* name;
  const char* py;
  at::ScalarType st;
};
const DTypeRow kDTypes[] = {
    {DType::F32, "f32", "torch.float32", at::kFloat},
    {DType::F64, "f64", "torch.float64", at::kDouble},
    {DType::F16, "f16", "torch.float16", at::kHalf},
    {DType::BF16, "bf16", "torch.bfloat16", at::kBFloat16},
    {DType::I64, "i64", "torch.int64", at::kLong},
    {DType::I32, "i32", "torch.int32", at::kInt},
    {DType::I16, "i16", "torch.int16", at::kShort},
    {DType::I8, "i8", "torch.int8", at::kChar},
    {DType::U8, "u8", "torch.uint8", at::kByte},
    {DType::Bool, "bool", "torch.bool", at::kBool},
    {DType::C64, "c64", "torch.complex64", at::kComplexFloat},
    {DType::C128, "c128", "torch.complex128", at::kComplexDouble},
    {DType::QI8, "qi8", "torch.qint8", at::kQInt8},
    {DType::QU8, "qu8", "torch.quint8", at::kQUInt8},
    {DType::QI32, "qi32", "torch.qint32", at::kQInt32},
};
}  // namespace

const char* dtype_name(DType d) {
  for (const auto& r : kDTypes)
    if (r.d == d) return r.name;
  return "?";
}

std::optional<DType> dtype_from_name(const std::string& s) {
  for (const auto& r : kDTypes)
    if (s == r.name) return r.d;
  if (s == "?") return DType::Unknown;
  return std::nullopt;
}

const char* dtype_python(DType d) {
  for (const auto& r : kDTypes)
    if (r.d == d) return r.py;
  return "None";
}

DType dtype_from_scalar_type(int64_t code) {
  for (const auto& r : kDTypes)
    if (static_cast<int64_t>(r.st) == code) return r.d;
  return DType::Unknown;
}

int64_t dtype_to_scalar_type(DType d) {
  for (const auto& r : kDTypes)
    if (r.d == d) return static_cast<int64_t>(r.st);
  return -1;
}

// ---------------------------------------------------------------------------------------------
// Type

bool Type::is_complete() const {
  if (kind != Kind::Tensor || dtype == DType::Unknown || !shape) return false;
  return std::all_of(shape->begin(), shape->end(), [](int64_t d) { return d >= 0; });
}

std::string Type::str() const {
  switch (kind) {
    case Kind::Any:
      return "Any";
    case Kind::Int:
      return "int";
    case Kind::Float:
      return "float";
    case Kind::Complex:
      return "complex";
    case Kind::Bool:
      return "bool";
    case Kind::Str:
      return "str";
    case Kind::None:
      return "None";
    case Kind::Device:
      return "Device";
    case Kind::ScalarType:
      return "ScalarType";
    case Kind::Layout:
      return "Layout";
    case Kind::MemoryFormat:
      return "MemoryFormat";
    case Kind::Generator:
      return "Generator";
    case Kind::Enum: {  // Enum["qualified.Name", NAME=VALUE, ...] (Note [Enum types])
      std::string s = "Enum[" + quote(name);
      for (const std::string& f : fields) s += ", " + f;
      return s + "]";
    }
    case Kind::Tensor: {
      if (dtype == DType::Unknown && !shape) return "Tensor";
      std::string s = dtype_name(dtype);
      if (shape) {
        s += "[";
        for (size_t i = 0; i < shape->size(); ++i) {
          if (i) s += ",";
          s += (*shape)[i] < 0 ? std::string("?") : std::to_string((*shape)[i]);
        }
        s += "]";
      }
      return s;
    }
    case Kind::List:
    case Kind::Optional:
    case Kind::Dict:
    case Kind::Tuple: {
      if (is_named_tuple()) {  // NamedTuple["qualified.Name", field: T, ...]
        std::string s = "NamedTuple[" + quote(name);
        for (size_t i = 0; i < elems.size(); ++i)
          s += ", " + (i < fields.size() ? fields[i] : "_" + std::to_string(i)) + ": " +
               elems[i].str();
        return s + "]";
      }
      std::string s = kind == Kind::List       ? "List["
                      : kind == Kind::Optional ? "Optional["
                      : kind == Kind::Dict     ? "Dict["
                                               : "Tuple[";
      for (size_t i = 0; i < elems.size(); ++i) {
        if (i) s += ", ";
        s += elems[i].str();
      }
      return s + "]";
    }
  }
  return "Any";
}

// ---------------------------------------------------------------------------------------------
// attributes

namespace {

std::string format_double(double v) {
  if (std::isnan(v)) return "nan";
  if (std::isinf(v)) return v > 0 ? "inf" : "-inf";
  char buf[64];
  // Shortest representation that round-trips exactly.
  for (int prec = 1; prec <= 17; ++prec) {
    std::snprintf(buf, sizeof buf, "%.*g", prec, v);
    if (std::strtod(buf, nullptr) == v) break;
  }
  std::string s = buf;
  if (s.find_first_of(".eEn") == std::string::npos) s += ".0";
  return s;
}

std::string quote(const std::string& s) {
  std::string out = "\"";
  for (char c : s) {
    switch (c) {
      case '"':
        out += "\\\"";
        break;
      case '\\':
        out += "\\\\";
        break;
      case '\n':
        out += "\\n";
        break;
      case '\t':
        out += "\\t";
        break;
      default:
        if (static_cast<unsigned char>(c) < 0x20) {
          char buf[8];
          std::snprintf(buf, sizeof buf, "\\x%02x", static_cast<unsigned char>(c));
          out += buf;
        } else {
          out += c;
        }
    }
  }
  return out + "\"";
}

std::string tensor_str(const at::Tensor& t) {
  if (!t.defined()) return "none";
  DType d = dtype_from_scalar_type(static_cast<int64_t>(t.scalar_type()));
  std::vector<int64_t> shape(t.sizes().begin(), t.sizes().end());
  std::string s = "tensor<" + Type::tensor(d, shape).str() + ">[";
  at::Tensor flat = t.detach().contiguous().reshape({-1});
  const bool is_float = at::isFloatingType(t.scalar_type());
  const bool is_bool = t.scalar_type() == at::kBool;
  at::Tensor conv = is_float ? flat.to(at::kDouble) : is_bool ? flat : flat.to(at::kLong);
  for (int64_t i = 0; i < conv.numel(); ++i) {
    if (i) s += ",";
    if (is_float)
      s += format_double(conv.data_ptr<double>()[i]);
    else if (is_bool)
      s += conv.data_ptr<bool>()[i] ? "true" : "false";
    else
      s += std::to_string(conv.data_ptr<int64_t>()[i]);
  }
  return s + "]";
}

template <typename T, typename F>
std::string list_str(const std::vector<T>& v, F f) {
  std::string s = "[";
  for (size_t i = 0; i < v.size(); ++i) {
    if (i) s += ",";
    s += f(v[i]);
  }
  return s + "]";
}

}  // namespace

std::string attr_str(const AttrValue& v) {
  struct V {
    std::string operator()(const NoneAttr&) const { return "none"; }
    std::string operator()(bool b) const { return b ? "true" : "false"; }
    std::string operator()(int64_t i) const { return std::to_string(i); }
    std::string operator()(double d) const { return format_double(d); }
    std::string operator()(const std::string& s) const { return quote(s); }
    std::string operator()(const std::vector<int64_t>& l) const {
      return list_str(l, [](int64_t i) { return std::to_string(i); });
    }
    std::string operator()(const std::vector<double>& l) const {
      return list_str(l, format_double);
    }
    std::string operator()(const std::vector<std::string>& l) const { return list_str(l, quote); }
    std::string operator()(DType d) const { return dtype_name(d); }
    std::string operator()(const DeviceAttr& d) const { return "device(" + quote(d.name) + ")"; }
    std::string operator()(const at::Tensor& t) const { return tensor_str(t); }
    std::string operator()(const std::complex<double>& z) const {
      return "complex(" + format_double(z.real()) + ", " + format_double(z.imag()) + ")";
    }
  };
  return std::visit(V{}, v);
}

bool attr_equal(const AttrValue& a, const AttrValue& b) {
  if (a.index() != b.index()) return false;
  if (const auto* ta = std::get_if<at::Tensor>(&a)) {
    const auto& tb = std::get<at::Tensor>(b);
    if (ta->defined() != tb.defined()) return false;
    if (!ta->defined()) return true;
    return ta->scalar_type() == tb.scalar_type() && ta->sizes() == tb.sizes() && at::equal(*ta, tb);
  }
  if (const auto* da = std::get_if<double>(&a)) {
    double db = std::get<double>(b);
    return *da == db || (std::isnan(*da) && std::isnan(db));
  }
  if (const auto* za = std::get_if<std::complex<double>>(&a)) {
    // The same number: the sign of a zero part counts (complex(0.0, -0.0) prints and computes
    // otherwise than complex(0.0, 0.0)), any NaN equals any NaN as for doubles.
    auto same = [](double x, double y) {
      return (std::isnan(x) && std::isnan(y)) || (x == y && std::signbit(x) == std::signbit(y));
    };
    const auto& zb = std::get<std::complex<double>>(b);
    return same(za->real(), zb.real()) && same(za->imag(), zb.imag());
  }
  // Same alternative, neither tensor nor double: compare the held values.
  return std::visit(
      [&b](const auto& x) -> bool {
        using T = std::decay_t<decltype(x)>;
        if constexpr (std::is_same_v<T, at::Tensor> || std::is_same_v<T, double>) {
          return false;  // handled above
        } else {
          return x == std::get<T>(b);
        }
      },
      a);
}

std::string enum_member_field(const std::string& name, const AttrValue& value) {
  return name + "=" + attr_str(value);
}

// Reads back what enum_member_field wrote: a quoted string (quote's escapes), a float
// (format_double always writes '.', 'e' or an 'n' of nan/inf) or an int.
std::vector<EnumMember> enum_members(const Type& t) {
  std::vector<EnumMember> out;
  for (const std::string& f : t.fields) {
    size_t eq = f.find('=');
    std::string name = f.substr(0, eq), text = eq == std::string::npos ? "" : f.substr(eq + 1);
    if (!text.empty() && text[0] == '"') {
      std::string v;
      for (size_t i = 1; i + 1 < text.size(); ++i) {
        char c = text[i];
        if (c == '\\' && i + 2 < text.size()) {
          char e = text[++i];
          if (e == 'n') {
            v += '\n';
          } else if (e == 't') {
            v += '\t';
          } else if (e == 'x' && i + 2 < text.size()) {
            v += static_cast<char>(std::stoi(text.substr(i + 1, 2), nullptr, 16));
            i += 2;
          } else {
            v += e;
          }
        } else {
          v += c;
        }
      }
      out.push_back({name, v});
    } else if (text.find_first_of(".en") != std::string::npos) {
      out.push_back({name, std::strtod(text.c_str(), nullptr)});
    } else {
      out.push_back({name, static_cast<int64_t>(std::strtoll(text.c_str(), nullptr, 10))});
    }
  }
  return out;
}

bool Attrs::has(const std::string& name) const { return find(name) != nullptr; }

const AttrValue* Attrs::find(const std::string& name) const {
  for (const auto& kv : items_)
    if (kv.first == name) return &kv.second;
  return nullptr;
}

const AttrValue& Attrs::at(const std::string& name) const {
  const AttrValue* v = find(name);
  TT_ASSERT(v, "missing attribute '" + name + "'");
  return *v;
}

void Attrs::set(const std::string& name, AttrValue v) {
  for (auto& kv : items_)
    if (kv.first == name) {
      kv.second = std::move(v);
      return;
    }
  items_.emplace_back(name, std::move(v));
}

bool Attrs::erase(const std::string& name) {
  for (auto it = items_.begin(); it != items_.end(); ++it)
    if (it->first == name) {
      items_.erase(it);
      return true;
    }
  return false;
}

int64_t Attrs::get_int(const std::string& name, int64_t def) const {
  const AttrValue* v = find(name);
  if (v)
    if (const auto* i = std::get_if<int64_t>(v)) return *i;
  return def;
}

double Attrs::get_float(const std::string& name, double def) const {
  const AttrValue* v = find(name);
  if (v) {
    if (const auto* d = std::get_if<double>(v)) return *d;
    if (const auto* i = std::get_if<int64_t>(v)) return static_cast<double>(*i);
  }
  return def;
}

bool Attrs::get_bool(const std::string& name, bool def) const {
  const AttrValue* v = find(name);
  if (v)
    if (const auto* b = std::get_if<bool>(v)) return *b;
  return def;
}

std::string Attrs::get_str(const std::string& name, const std::string& def) const {
  const AttrValue* v = find(name);
  if (v)
    if (const auto* s = std::get_if<std::string>(v)) return *s;
  return def;
}

std::vector<int64_t> Attrs::get_ints(const std::string& name, std::vector<int64_t> def) const {
  const AttrValue* v = find(name);
  if (v) {
    if (const auto* l = std::get_if<std::vector<int64_t>>(v)) return *l;
    if (const auto* i = std::get_if<int64_t>(v)) return {*i};
  }
  return def;
}

// ---------------------------------------------------------------------------------------------
// WeightStore

IrOpCounts& ir_op_counts() {
  // Per thread: the emitters may read one graph from two threads (Note [Emitters in parallel]
  // in lib/driver/convert.cpp); a unit test counts on its own thread.
  thread_local IrOpCounts counts;
  return counts;
}

WeightStore::Index::const_iterator WeightStore::lookup(const std::string& name) const {
  ++ir_op_counts().weight_lookups;
  return index_.find(name);
}

WeightStore::Index::iterator WeightStore::lookup(const std::string& name) {
  ++ir_op_counts().weight_lookups;
  return index_.find(name);
}

const Weight* WeightStore::find(const std::string& name) const {
  auto it = lookup(name);
  return it == index_.end() ? nullptr : &it->second.weight;
}

Weight* WeightStore::find(const std::string& name) {
  auto it = lookup(name);
  return it == index_.end() ? nullptr : &it->second.weight;
}

const Weight& WeightStore::at(const std::string& name) const {
  const Weight* w = find(name);
  TT_ASSERT(w, "missing weight '" + name + "'");
  return *w;
}

// `it` is a new entry of index_; its name goes to the end of the order.
void WeightStore::append(Index::iterator it, std::string name) {
  it->second.pos = order_.size();
  order_.push_back(std::move(name));
  slots_.push_back(&it->second);
}

void WeightStore::set(const std::string& name, Weight w) {
  ++ir_op_counts().weight_lookups;
  auto [it, fresh] = index_.try_emplace(name);
  it->second.weight = std::move(w);
  if (fresh) append(it, name);
}

bool WeightStore::add(std::string name, Weight w) {
  ++ir_op_counts().weight_lookups;
  auto [it, fresh] = index_.try_emplace(name);
  if (!fresh) return false;
  it->second.weight = std::move(w);
  append(it, std::move(name));
  return true;
}

bool WeightStore::erase(const std::string& name) {
  auto it = lookup(name);
  if (it == index_.end()) return false;
  size_t pos = it->second.pos;
  index_.erase(it);
  if (pos + 1 == order_.size()) {
    order_.pop_back();
    slots_.pop_back();
  } else {
    slots_[pos] = nullptr;
    ++holes_;
  }
  return true;
}

// A slot of order_ is live when slots_ points at its entry; a name erased and set again has a
// new slot at the end, so its old one is a hole (Note [Weight-store slots]: no name is hashed).
void WeightStore::compact() const {
  if (!holes_) return;
  size_t out = 0;
  for (size_t i = 0; i < order_.size(); ++i) {
    Entry* e = slots_[i];
    if (!e) continue;
    if (out != i) {
      order_[out] = std::move(order_[i]);
      slots_[out] = e;
      e->pos = out;
      ++ir_op_counts().weight_slots_moved;
    }
    ++out;
  }
  order_.resize(out);
  slots_.resize(out);
  holes_ = 0;
}

void WeightStore::relink() {
  slots_.assign(order_.size(), nullptr);
  for (auto& kv : index_) slots_[kv.second.pos] = &kv.second;
}

const std::vector<std::string>& WeightStore::names() const {
  compact();
  return order_;
}

int64_t WeightStore::numel() const {
  int64_t n = 0;
  for (const auto& kv : index_)
    if (kv.second.weight.tensor.defined()) n += kv.second.weight.tensor.numel();
  return n;
}

int64_t WeightStore::nbytes() const {
  int64_t n = 0;
  for (const auto& kv : index_) {
    const at::Tensor& t = kv.second.weight.tensor;
    if (t.defined()) n += t.numel() * t.element_size();
  }
  return n;
}

std::string WeightStore::unique_name(const std::string& hint) const {
  if (!has(hint)) return hint;
  for (int i = 1;; ++i) {
    std::string cand = hint + "_" + std::to_string(i);
    if (!has(cand)) return cand;
  }
}

// ---------------------------------------------------------------------------------------------
// Value

Graph* Value::graph() const { return node_->graph(); }

Value* Value::set_name(const std::string& hint) {
  Graph* g = graph();
  if (!name_.empty()) g->release_name(name_);
  name_ = g->claim_name(hint, this);
  return this;
}

const Use& UseList::operator[](size_t i) const {
  TT_ASSERT(i < live_, "use index out of range");
  for (const Use& u : slots_) {
    ++ir_op_counts().use_slots_scanned;
    if (u.user && i-- == 0) return u;
  }
  TT_ASSERT(false, "use list out of sync");
  return slots_.front();
}

size_t Value::add_use(Node* user, size_t index) {
  uses_.push_back({user, index});
  return uses_.size() - 1;
}

void Value::drop_use(size_t slot) {
  TT_ASSERT(slot < uses_.size() && uses_[slot].user, "use list out of sync");
  uses_[slot].user = nullptr;
  ++holes_;
  while (!uses_.empty() && !uses_.back().user) {
    uses_.pop_back();
    --holes_;
  }
  // Compact once holes are the majority: each compaction moves at most as many slots as there
  // were removals since the last one, so removals stay O(1) amortised.
  if (holes_ > 8 && holes_ * 2 > uses_.size()) {
    size_t out = 0;
    for (size_t i = 0; i < uses_.size(); ++i) {
      Use u = uses_[i];
      if (!u.user) continue;
      if (out != i) {
        uses_[out] = u;
        u.user->use_slots_[u.index] = out;
        ++ir_op_counts().use_slots_moved;
      }
      ++out;
    }
    uses_.resize(out);
    holes_ = 0;
  }
}

void Value::replace_all_uses_with(Value* other) {
  TT_ASSERT(other != this, "replace_all_uses_with itself");
  // The last slot is never a hole: take the uses from the back, as before (same order on `other`).
  while (!uses_.empty()) {
    Use u = uses_.back();
    u.user->replace_input(u.index, other);
  }
}

void Value::replace_uses_with_if(Value* other, const std::function<bool(const Use&)>& pred) {
  std::vector<Use> selected;
  for (const Use& u : uses())
    if (pred(u)) selected.push_back(u);
  for (const Use& u : selected) u.user->replace_input(u.index, other);
}

const AttrValue* Value::constant() const {
  if (node_->op() != "prim.Constant") return nullptr;
  return node_->attrs().find("value");
}

bool Value::is_none_constant() const {
  const AttrValue* c = constant();
  return c && std::holds_alternative<NoneAttr>(*c);
}

// ---------------------------------------------------------------------------------------------
// Node

Graph* Node::graph() const { return graph_; }

void Node::add_input(Value* v) {
  TT_ASSERT(v, "null input");
  use_slots_.push_back(v->add_use(this, inputs_.size()));
  inputs_.push_back(v);
}

void Node::insert_input(size_t i, Value* v) {
  TT_ASSERT(i <= inputs_.size(), "insert_input out of range");
  // Shift the recorded indices of the inputs after i.
  for (size_t j = i; j < inputs_.size(); ++j) ++inputs_[j]->uses_[use_slots_[j]].index;
  ir_op_counts().input_indices_shifted += inputs_.size() - i;
  inputs_.insert(inputs_.begin() + static_cast<long>(i), v);
  use_slots_.insert(use_slots_.begin() + static_cast<long>(i), v->add_use(this, i));
}

// O(1) amortised: the node knows the slot of its use (Note [Scale in graph size]).
void Node::remove_use_of_input(size_t i) { inputs_[i]->drop_use(use_slots_[i]); }

void Node::replace_input(size_t i, Value* v) {
  TT_ASSERT(i < inputs_.size() && v, "replace_input out of range");
  remove_use_of_input(i);
  inputs_[i] = v;
  use_slots_[i] = v->add_use(this, i);
}

void Node::replace_input_with(Value* from, Value* to) {
  for (size_t i = 0; i < inputs_.size(); ++i)
    if (inputs_[i] == from) replace_input(i, to);
}

void Node::remove_input(size_t i) {
  TT_ASSERT(i < inputs_.size(), "remove_input out of range");
  remove_use_of_input(i);
  for (size_t j = i + 1; j < inputs_.size(); ++j) --inputs_[j]->uses_[use_slots_[j]].index;
  ir_op_counts().input_indices_shifted += inputs_.size() - i - 1;
  inputs_.erase(inputs_.begin() + static_cast<long>(i));
  use_slots_.erase(use_slots_.begin() + static_cast<long>(i));
}

void Node::remove_all_inputs() {
  for (size_t i = 0; i < inputs_.size(); ++i) remove_use_of_input(i);
  inputs_.clear();
  use_slots_.clear();
}

const OpInfo* Node::info() const {
  if (info_known_.load(std::memory_order_acquire)) return info_.load(std::memory_order_relaxed);
  const OpInfo* info = find_op(*op_);
  info_.store(info, std::memory_order_relaxed);
  info_known_.store(true, std::memory_order_release);
  return info;
}

Value* Node::add_output(Type t, const std::string& name_hint) {
  owned_outputs_.emplace_back(
      new Value(this, outputs_.size(), std::move(t), graph_->next_serial_++));
  Value* v = owned_outputs_.back().get();
  outputs_.push_back(v);
  v->set_name(name_hint);
  return v;
}

void Node::erase_output(size_t i) {
  TT_ASSERT(i < outputs_.size(), "erase_output out of range");
  Value* v = outputs_[i];
  TT_ASSERT(v->uses_.empty(), "erase_output of a value that is still used: %" + v->name());
  graph_->release_name(v->name_);
  outputs_.erase(outputs_.begin() + static_cast<long>(i));
  for (size_t j = i; j < outputs_.size(); ++j) outputs_[j]->offset_ = j;
  auto it = std::find_if(owned_outputs_.begin(), owned_outputs_.end(),
                         [v](const std::unique_ptr<Value>& p) { return p.get() == v; });
  owned_outputs_.erase(it);
}

Block* Node::add_block() {
  blocks_.emplace_back(new Block(graph_, this));
  return blocks_.back().get();
}

std::string Node::weight(const std::string& key) const {
  for (const auto& kv : weights_)
    if (kv.first == key) return kv.second;
  return "";
}

void Node::set_weight(const std::string& key, const std::string& name) {
  for (auto& kv : weights_)
    if (kv.first == key) {
      kv.second = name;
      return;
    }
  weights_.emplace_back(key, name);
}

bool Node::erase_weight(const std::string& key) {
  for (auto it = weights_.begin(); it != weights_.end(); ++it)
    if (it->first == key) {
      weights_.erase(it);
      return true;
    }
  return false;
}

void Node::copy_provenance(const Node* from) {
  if (from->graph_ == graph_) {
    scope_ = from->scope_;
    loc_ = from->loc_;
  } else {
    set_scope(*from->scope_);
    set_loc(*from->loc_);
  }
}

// ---------------------------------------------------------------------------------------------
// Interned node strings (Note [Interned node strings] in ir.h)

const std::string* StringPool::intern(std::string s) {
  if (s.empty()) return empty();
  auto it = strings_.find(std::string_view(s));
  if (it != strings_.end()) return it->second.get();
  auto owned = std::make_unique<const std::string>(std::move(s));
  const std::string* p = owned.get();
  strings_.emplace(std::string_view(*p), std::move(owned));
  return p;
}

Node::Node(Graph* g, std::string op) : graph_(g), op_(g->strings_.intern(std::move(op))) {}

void Node::set_op(std::string op) {
  op_ = graph_->strings_.intern(std::move(op));
  info_known_.store(false, std::memory_order_relaxed);
}
void Node::set_module(std::string m) { module_ = graph_->strings_.intern(std::move(m)); }
void Node::set_scope(std::string s) { scope_ = graph_->strings_.intern(std::move(s)); }
void Node::set_loc(std::string l) { loc_ = graph_->strings_.intern(std::move(l)); }

bool Node::is_before(const Node* other) const {
  TT_ASSERT(block_ && block_ == other->block_, "is_before across blocks");
  return order_ < other->order_;
}

// Note [Node order numbers]
// Each node of a block carries an increasing number so that is_before is O(1). Insertion takes
// the midpoint of the neighbours' numbers; when there is no gap left the block is renumbered
// (rare: the gap starts at 2^20 and halves only under repeated insertion at one spot). Numbers
// start at 2^62, and a node appended or prepended takes a full gap past the end, so loaders
// appending and passes prepending constants (Graph::constant) never renumber.
namespace {
constexpr uint64_t kOrderGap = uint64_t(1) << 20;
constexpr uint64_t kOrderBase = uint64_t(1) << 62;
}  // namespace

void Block::renumber() {
  uint64_t o = kOrderBase;
  for (Node* n = head_; n; n = n->next_) {
    n->order_ = o;
    o += kOrderGap;
  }
  ir_op_counts().nodes_renumbered += size_;
}

void Node::insert_before(Node* pos) {
  TT_ASSERT(!block_, "insert_before of a node that is already in a block");
  TT_ASSERT(pos && pos->block_, "insert_before an unplaced node");
  Block* b = pos->block_;
  // Linked in before `pos` (at the end for the return node); the block owns the node from here.
  Node* after = pos == b->ret_.get() ? nullptr : pos;
  prev_ = after ? after->prev_ : b->tail_;
  next_ = after;
  (prev_ ? prev_->next_ : b->head_) = this;
  (next_ ? next_->prev_ : b->tail_) = this;
  ++b->size_;
  block_ = b;
  b->place(this);
  b->count_nodes(static_cast<int64_t>(nested_count()));
}

void Node::insert_after(Node* pos) {
  TT_ASSERT(pos && pos->block_, "insert_after an unplaced node");
  Block* b = pos->block_;
  if (pos == b->param_.get()) {
    Node* f = b->front();
    if (f)
      insert_before(f);
    else
      b->append(this);
    return;
  }
  Node* nx = pos->next();
  if (nx)
    insert_before(nx);
  else
    b->append(this);
}

// This node and the nodes of its blocks (Note [Node counts]).
size_t Node::nested_count() const {
  size_t n = 1;
  for (const auto& b : blocks_) n += b->total_;
  return n;
}

void Node::unlink() {
  TT_ASSERT(block_, "unlink of a detached node");
  block_->count_nodes(-static_cast<int64_t>(nested_count()));
  unlink_from_list();  // ownership goes back to the caller
}

void Node::unlink_from_list() {
  (prev_ ? prev_->next_ : block_->head_) = next_;
  (next_ ? next_->prev_ : block_->tail_) = prev_;
  --block_->size_;
  next_ = prev_ = nullptr;
  block_ = nullptr;
}

void Node::move_before(Node* pos) {
  if (pos == this) return;
  unlink();
  insert_before(pos);
}

void Node::move_after(Node* pos) {
  if (pos == this) return;
  unlink();
  insert_after(pos);
}

void Node::destroy() {
  for (Value* v : outputs_)
    TT_ASSERT(v->uses_.empty(),
              "destroy of " + *op_ + " whose output %" + v->name() + " is still used");
  // Nested blocks first: their nodes may use our inputs or each other.
  for (auto& b : blocks_) b->clear();
  remove_all_inputs();
  for (Value* v : outputs_) graph_->release_name(v->name_);
  if (block_) {
    block_->count_nodes(-1);  // the blocks are empty now
    unlink_from_list();
  }
  delete this;
}

// ---------------------------------------------------------------------------------------------
// Block

Block::Block(Graph* g, Node* owner) : graph_(g), owner_(owner) {
  param_.reset(new Node(g, "prim.Param"));
  ret_.reset(new Node(g, "prim.Return"));
  param_->block_ = this;
  ret_->block_ = this;
}

// Front to back, as the std::list of nodes did; nothing reads the use lists any more (Graph's
// teardown).
Block::~Block() {
  for (Node* n = head_; n;) {
    Node* nx = n->next_;
    delete n;
    n = nx;
  }
}

void Block::clear() {
  // Destroy back to front so uses disappear before their definitions.
  while (tail_) {
    Node* n = tail_;
    for (Value* v : n->outputs_) {
      // Uses can only come from later nodes (already gone) or the return node.
      while (!v->uses_.empty()) {
        Use u = v->uses_.back();
        TT_ASSERT(u.user == ret_.get(), "block clear: unexpected remaining use");
        ret_->remove_input(u.index);
      }
    }
    n->destroy();
  }
  ret_->remove_all_inputs();
}

// Note [Node counts]
// Each block keeps the number of nodes in it and in the blocks nested in it (total_), so
// Graph::num_nodes is O(1) (the PassManager asks after every pass; a walk over 10^6 nodes costs
// ~0.3 s of cache misses; issue #22). Linking or unlinking a node adds or subtracts the node and
// its nested nodes (Node::nested_count, O(its blocks)) along the chain of enclosing blocks, which
// stops at a node that is not in a block yet: the blocks of a detached node count their own nodes,
// and the node brings them along when it is inserted. Cost O(nesting depth) per link.
void Block::count_nodes(int64_t delta) {
  for (Block* b = this; b; b = b->owner_ ? b->owner_->block_ : nullptr) {
    b->total_ = static_cast<size_t>(static_cast<int64_t>(b->total_) + delta);
    ++ir_op_counts().node_count_updates;
  }
}

const std::vector<Value*>& Block::inputs() const { return param_->outputs(); }
const std::vector<Value*>& Block::outputs() const { return ret_->inputs(); }

Value* Block::add_input(Type t, const std::string& name_hint) {
  return param_->add_output(std::move(t), name_hint);
}

void Block::erase_input(size_t i) {
  if (!owner_) graph_->clear_input_default(inputs().at(i));
  param_->erase_output(i);
}
void Block::add_output(Value* v) { ret_->add_input(v); }
void Block::replace_output(size_t i, Value* v) { ret_->replace_input(i, v); }
void Block::erase_output(size_t i) { ret_->remove_input(i); }

Node* Block::front() const { return head_; }
Node* Block::back() const { return tail_; }

std::vector<Node*> Block::nodes() const {
  std::vector<Node*> out;
  out.reserve(size_);
  for (Node* n = head_; n; n = n->next_) out.push_back(n);
  return out;
}

void Block::append(Node* n) { n->insert_before(ret_.get()); }

void Block::prepend(Node* n) {
  if (!head_)
    append(n);
  else
    n->insert_before(front());
}

void Block::place(Node* n) {
  uint64_t lo = n->prev_ ? n->prev_->order_ : 0;
  Node* nx = n->next_;
  if (!nx) {
    n->order_ = n->prev_ ? lo + kOrderGap : kOrderBase;
    return;
  }
  uint64_t hi = nx->order_;
  if (!n->prev_ && hi > kOrderGap) {
    n->order_ = hi - kOrderGap;  // prepending leaves a full gap, like appending
  } else if (hi - lo >= 2) {
    n->order_ = lo + (hi - lo) / 2;
  } else {
    renumber();
  }
}

// ---------------------------------------------------------------------------------------------
// Graph

Graph::Graph() : top_(new Block(this, nullptr)) {}

// Teardown frees nodes and values without maintaining use lists (nothing reads them any more),
// so even a graph a buggy pass left out of SSA order is destroyed without an assertion.
Graph::~Graph() = default;

Node* Graph::create(const std::string& op, const std::vector<Value*>& inputs, size_t num_outputs) {
  Node* n = new Node(this, op);
  for (Value* v : inputs) n->add_input(v);
  for (size_t i = 0; i < num_outputs; ++i) n->add_output();
  return n;
}

Node* Graph::insert(const std::string& op, const std::vector<Value*>& inputs, size_t num_outputs,
                    Node* pos) {
  Node* n = create(op, inputs, num_outputs);
  if (pos)
    n->insert_before(pos);
  else
    top_->append(n);
  return n;
}

Value* Graph::constant(AttrValue v, Type t, Node* pos) {
  Node* n = create("prim.Constant");
  n->attrs().set("value", std::move(v));
  Value* out = n->add_output(std::move(t));
  if (pos)
    n->insert_before(pos);
  else
    top_->prepend(n);
  return out;
}

// Note [Walking all nodes]
// all_nodes runs about a dozen times per convert (the emitters, the report, the alias facts), and
// a deep model has ~10^5 nodes: the walk reads the blocks' node lists directly (Graph is a friend
// of Block) through a plain recursive lambda instead of a std::function and Node::next, and the
// vector is sized once (num_nodes is kept up to date, Note [Node counts]). Same order: each
// node, then the nodes of its blocks, before the next node.
std::vector<Node*> Graph::all_nodes() const {
  std::vector<Node*> out;
  out.reserve(num_nodes());
  auto walk = [&out](auto& self, const Block* b) -> void {
    for (Node* n = b->head_; n; n = n->next_) {
      out.push_back(n);
      for (const auto& sub : n->blocks()) self(self, sub.get());
    }
  };
  walk(walk, top_.get());
  return out;
}

size_t Graph::num_nodes() const { return top_->total_; }  // Note [Node counts]

// A name for `v` from `hint`, entered in the name table: the hint itself when free, else the
// hint with the next free suffix of its counter ("x_1", "x_2"); an empty hint gives the next free
// number. One lookup of the table per name tried (a free hint, the common case of a loader, is
// one).
std::string Graph::claim_name(const std::string& hint, Value* v) {
  if (hint.empty()) {
    while (true) {
      std::string cand = std::to_string(next_anon_++);
      if (names_.claim(cand, v)) return cand;
    }
  }
  if (names_.claim(hint, v)) return hint;
  uint64_t& counter = name_counters_[hint];
  while (true) {
    std::string cand = hint + "_" + std::to_string(++counter);
    if (names_.claim(cand, v)) return cand;
  }
}

Value* Graph::find_value(const std::string& name) const { return names_.find(name); }

void Graph::release_name(const std::string& name) { names_.release(name); }

// ---------------------------------------------------------------------------------------------
// NameTable (Note [Numbered names] in ir.h)

int64_t NameTable::number_of(const std::string& name) {
  if (name.empty() || name.size() > 18 || (name[0] == '0' && name.size() > 1)) return -1;
  int64_t n = 0;
  for (char c : name) {
    if (c < '0' || c > '9') return -1;
    n = n * 10 + (c - '0');
  }
  return n;
}

bool NameTable::claim(const std::string& name, Value* v) {
  int64_t n = number_of(name);
  if (n >= 0 && static_cast<uint64_t>(n) < numbered_.size() + kNumberedReach) {
    size_t i = static_cast<size_t>(n);
    if (i < numbered_.size() && numbered_[i]) return false;
    if (numbers_in_others_ && others_.count(name)) return false;  // entered while far
    if (i >= numbered_.size()) numbered_.resize(i + 1, nullptr);
    numbered_[i] = v;
    return true;
  }
  if (!others_.try_emplace(name, v).second) return false;
  if (n >= 0) ++numbers_in_others_;
  return true;
}

Value* NameTable::find(const std::string& name) const {
  int64_t n = number_of(name);
  if (n >= 0 && static_cast<uint64_t>(n) < numbered_.size() && numbered_[n]) return numbered_[n];
  if (n >= 0 && !numbers_in_others_) return nullptr;
  auto it = others_.find(name);
  return it == others_.end() ? nullptr : it->second;
}

void NameTable::release(const std::string& name) {
  int64_t n = number_of(name);
  if (n >= 0 && static_cast<uint64_t>(n) < numbered_.size() && numbered_[n]) {
    numbered_[n] = nullptr;
    return;
  }
  if (others_.erase(name) && n >= 0) --numbers_in_others_;
}

// ---------------------------------------------------------------------------------------------

ContainerKind container_kind(const std::string& type) {
  for (const char* prefix : {"torch.nn.modules.container.", "torch.nn."}) {
    std::string p = prefix;
    if (type.rfind(p, 0) != 0) continue;
    std::string rest = type.substr(p.size());
    if (rest == "Sequential") return ContainerKind::Sequential;
    if (rest == "ModuleList") return ContainerKind::ModuleList;
    if (rest == "ModuleDict") return ContainerKind::ModuleDict;
  }
  return ContainerKind::None;
}

std::string short_type_name(const std::string& type) {
  size_t dot = type.rfind('.');
  return dot == std::string::npos ? type : type.substr(dot + 1);
}

std::string sanitize_name(const std::string& raw) {
  std::string s = raw;
  // TorchScript debug names: "input.1", "x.3" -> drop the numeric suffix.
  auto dot = s.rfind('.');
  if (dot != std::string::npos && dot + 1 < s.size() &&
      std::all_of(s.begin() + static_cast<long>(dot) + 1, s.end(), ::isdigit))
    s.erase(dot);
  for (char& c : s)
    if (!std::isalnum(static_cast<unsigned char>(c)) && c != '_') c = '_';
  if (s.empty() || std::all_of(s.begin(), s.end(), ::isdigit)) return "";
  if (std::isdigit(static_cast<unsigned char>(s[0]))) s = "_" + s;
  return s;
}

Location location_of(const Node& n) {
  return {n.num_outputs() ? n.output(0)->name() : "", n.scope(), n.loc()};
}

std::string describe(const Node& n) {
  std::string where = describe(location_of(n));
  return where.empty() ? n.op() : n.op() + " " + where;
}

bool default_fits(const Type& t, const AttrValue& v) {
  using K = Type::Kind;
  if (t.kind == K::Optional)
    return std::holds_alternative<NoneAttr>(v) || (!t.elems.empty() && default_fits(t.elems[0], v));
  // A tuple default is held as a list of its items, all of one kind.
  auto items_fit = [&](K item) {
    if (t.kind == K::List) return !t.elems.empty() && t.elems[0].kind == item;
    if (t.kind != K::Tuple) return false;
    size_t n = std::visit(
        [](const auto& x) -> size_t {
          using X = std::decay_t<decltype(x)>;
          if constexpr (std::is_same_v<X, std::vector<int64_t>> ||
                        std::is_same_v<X, std::vector<double>> ||
                        std::is_same_v<X, std::vector<std::string>>)
            return x.size();
          return 0;
        },
        v);
    if (t.elems.size() != n) return false;
    for (const Type& e : t.elems)
      if (e.kind != item) return false;
    return true;
  };
  return std::visit(
      [&](const auto& x) {
        using X = std::decay_t<decltype(x)>;
        if constexpr (std::is_same_v<X, NoneAttr>) return t.kind == K::None;
        if constexpr (std::is_same_v<X, bool>) return t.kind == K::Bool;
        if constexpr (std::is_same_v<X, int64_t>)
          return t.kind == K::Int || t.kind == K::ScalarType || t.kind == K::Layout ||
                 t.kind == K::MemoryFormat;
        if constexpr (std::is_same_v<X, double>) return t.kind == K::Float;
        if constexpr (std::is_same_v<X, std::complex<double>>) return t.kind == K::Complex;
        if constexpr (std::is_same_v<X, std::string>) return t.kind == K::Str;
        if constexpr (std::is_same_v<X, DeviceAttr>) return t.kind == K::Device;
        if constexpr (std::is_same_v<X, std::vector<int64_t>>) return items_fit(K::Int);
        if constexpr (std::is_same_v<X, std::vector<double>>) return items_fit(K::Float);
        if constexpr (std::is_same_v<X, std::vector<std::string>>) return items_fit(K::Str);
        if constexpr (std::is_same_v<X, DType>) return t.kind == K::ScalarType;
        return false;  // tensors: no input default
      },
      v);
}

const AttrValue* Graph::input_default(const Value* input) const {
  auto it = input_defaults_.find(input);
  return it == input_defaults_.end() ? nullptr : &it->second;
}

size_t Graph::num_required_inputs() const {
  size_t n = 0;
  while (n < inputs().size() && !input_default(inputs()[n])) ++n;
  return n;
}

void Graph::set_input_default(const Value* input, AttrValue v) {
  TT_ASSERT(input->node() == top_->param_node(), "a default belongs to a graph input");
  input_defaults_[input] = std::move(v);
}

}  // namespace tt
