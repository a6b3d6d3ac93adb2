// The torch.export module builder (builder.h): the program's signature and nodes, and the call tree
// they were traced in.
#include "loaders/export/builder.h"

namespace tt::pt2 {

jit::Module Builder::run() {
  Archive a = read_archive(path_);
  try {
    return build(a);
  } catch (const json::exception& e) {
    malformed(first_line(e.what()));
  }
}

jit::Module Builder::build(const Archive& a) {
  const json& prog = a.program;
  if (prog.contains("schema_version")) {
    const json& v = prog["schema_version"];
    int64_t major = v.value("major", int64_t{0});
    if (major != 8 && diags_)
      diags_->warn("export-schema",
                   "the archive's schema version is " + std::to_string(major) + "." +
                       std::to_string(v.value("minor", int64_t{0})) +
                       "; tinytrace is made for torch 2.6's 8.x — check the result");
  }
  const json& gm = field(prog, "graph_module");
  graph_ = &field(gm, "graph");
  const json& sig = field(gm, "signature");
  for (const json& n : field(*graph_, "nodes")) nodes_.push_back(&n);
  for (const char* k : {"sym_int_values", "sym_float_values", "sym_bool_values"}) {
    if (!graph_->contains(k)) continue;
    Kind kind = k[4] == 'i' ? Kind::Int : k[4] == 'f' ? Kind::Float : Kind::Bool;
    for (auto it = (*graph_)[k].begin(); it != (*graph_)[k].end(); ++it) kinds_[it.key()] = kind;
  }
  if (graph_->contains("tensor_values"))
    for (auto it = (*graph_)["tensor_values"].begin(); it != (*graph_)["tensor_values"].end(); ++it)
      kinds_[it.key()] = Kind::Tensor;

  auto state = load_tensor_dict(a.path, a.state_dict, "serialized_state_dict.pt");
  auto consts = load_tensor_dict(a.path, a.constants, "serialized_constants.pt");
  std::map<std::string, at::Tensor> tensors(state.begin(), state.end());
  for (auto& c : consts) tensors.emplace(c.first, c.second);

  read_signature(sig, tensors);
  read_nodes();
  build_modules();
  schedule(root_);
  find_outputs();
  std::map<std::string, int> calls_per_module;
  name_methods(root_, calls_per_module);
  build_method(root_, field(gm, "module_call_graph"));
  root_module().eval();
  return root_module();
}

void Builder::read_signature(const json& sig, const std::map<std::string, at::Tensor>& tensors) {
  const json& specs = field(sig, "input_specs");
  const json& inputs = field(*graph_, "inputs");
  if (specs.size() != inputs.size()) malformed("the signature and the graph have different inputs");
  for (const json& s : specs) {
    auto [kind, body] = union_member(s);
    auto tensor = [&](const std::string& target) {
      auto it = tensors.find(target);
      if (it == tensors.end())
        malformed("no tensor '" + target + "' in the archive's state_dict or constants");
      return it->second;
    };
    if (kind == "user_input") {
      auto [ak, arg] = union_member(field(*body, "arg"));
      if (ak != "as_tensor")
        throw Error(ExitCode::Unsupported,
                    "the exported model takes a non-tensor input (" + ak +
                        "); tinytrace converts models whose inputs are tensors — export it with "
                        "tensor inputs only");
      user_inputs_.push_back(field(*arg, "name").get<std::string>());
    } else if (kind == "parameter") {
      std::string name = field(field(*body, "arg"), "name").get<std::string>();
      std::string target = field(*body, "parameter_name").get<std::string>();
      weights_[name] = WeightSpec{target, WeightSpec::Parameter, tensor(target)};
    } else if (kind == "buffer") {
      std::string name = field(field(*body, "arg"), "name").get<std::string>();
      std::string target = field(*body, "buffer_name").get<std::string>();
      weights_[name] = WeightSpec{target, WeightSpec::Buffer, tensor(target)};
    } else if (kind == "tensor_constant") {
      std::string name = field(field(*body, "arg"), "name").get<std::string>();
      std::string target = field(*body, "tensor_constant_name").get<std::string>();
      weights_[name] = WeightSpec{target, WeightSpec::Constant, tensor(target)};
    } else {
      throw Error(
          ExitCode::Unsupported,
          "the exported program has a " + kind +
              " input (custom objects, effect tokens and constant inputs are not supported) — "
              "export a model whose inputs are tensors and whose state is tensors");
    }
  }
  for (const json& s : field(sig, "output_specs")) {
    auto [kind, body] = union_member(s);
    if (kind == "user_output") continue;
    std::string what =
        kind == "buffer_mutation"
            ? "writes a buffer (" + body->value("buffer_name", std::string("?")) + ")"
        : kind == "user_input_mutation" ? "writes into its input"
                                        : "has a " + kind + " output (a training graph)";
    throw Error(
        ExitCode::Unsupported,
        "the exported program " + what +
            "; tinytrace converts inference graphs — export the "
            "model in eval mode (model.eval()) without in-place writes to its inputs or buffers");
  }
}

void Builder::collect_uses(const json& arg, std::vector<std::string>& out) {
  if (!arg.is_object()) return;
  for (auto it = arg.begin(); it != arg.end(); ++it) {
    const std::string& k = it.key();
    const json& v = it.value();
    if (k == "as_tensor" || k == "as_custom_obj") {
      out.push_back(v.at("name").get<std::string>());
    } else if (k == "as_tensors") {
      for (const json& t : v) out.push_back(t.at("name").get<std::string>());
    } else if (k == "as_optional_tensors") {
      for (const json& t : v)
        if (t.contains("as_tensor")) out.push_back(t["as_tensor"].at("name").get<std::string>());
    } else if (k == "as_sym_int" || k == "as_sym_float" || k == "as_sym_bool") {
      if (v.contains("as_name")) out.push_back(v["as_name"].get<std::string>());
    } else if (k == "as_sym_ints" || k == "as_sym_floats" || k == "as_sym_bools") {
      for (const json& e : v)
        if (e.contains("as_name")) out.push_back(e["as_name"].get<std::string>());
    }
  }
}

void Builder::collect_defs(const json& out, std::vector<std::string>& names) {
  auto [k, v] = union_member(out);
  if (k == "as_tensor")
    names.push_back(v->at("name").get<std::string>());
  else if (k == "as_tensors")
    for (const json& t : *v) names.push_back(t.at("name").get<std::string>());
  else if ((k == "as_sym_int" || k == "as_sym_float" || k == "as_sym_bool") &&
           v->contains("as_name"))
    names.push_back((*v)["as_name"].get<std::string>());
}

bool Builder::is_scalar_node(int i) const {
  const json& n = *nodes_[i];
  std::vector<std::string> defs;
  for (const json& o : n.at("outputs")) collect_defs(o, defs);
  if (defs.empty()) return false;
  for (const auto& d : defs) {
    auto it = kinds_.find(d);
    if (it == kinds_.end() || it->second == Kind::Tensor) return false;
  }
  return true;
}

Call* Builder::new_call(Call* parent, const StackEntry& e, const std::string& path) {
  calls_.emplace_back();
  Call* c = &calls_.back();
  c->key = e.key;
  c->path = path;
  c->cls = e.cls;
  c->parent = parent;
  if (parent) {
    parent->children.push_back(c);
    parent->by_key[e.key] = c;
  }
  return c;
}

// A decomposed program (ep.run_decompositions()) spells F.linear(x, w, b) as
// addmm(b, x, permute(w, [1, 0])): with w and b a module's weight and bias, the pair is lifted as
// the aten::linear it came from (so nn.Linear is recognised again). Records the addmm in linear_
// and drops the permute.
void Builder::fold_linear() {
  auto weight = [&](const json& arg, int64_t dims) -> std::optional<std::string> {
    if (!arg.contains("as_tensor")) return std::nullopt;
    std::string name = arg["as_tensor"].at("name").get<std::string>();
    auto w = weights_.find(name);
    if (w == weights_.end() || w->second.value.dim() != dims) return std::nullopt;
    return name;
  };
  for (size_t b = 0; b < nodes_.size(); ++b) {
    const json& n = *nodes_[b];
    if (dropped_[b] || n.at("target").get<std::string>() != "torch.ops.aten.addmm.default")
      continue;
    std::map<std::string, const json*> in;
    for (const json& a : n.at("inputs")) in[a.at("name").get<std::string>()] = &a.at("arg");
    auto is_one = [&](const char* k) {
      auto it = in.find(k);
      return it == in.end() || (it->second->contains("as_int") && (*it->second)["as_int"] == 1) ||
             (it->second->contains("as_float") && (*it->second)["as_float"] == 1.0);
    };
    if (!in.count("self") || !in.count("mat1") || !in.count("mat2") || !is_one("beta") ||
        !is_one("alpha"))
      continue;
    auto bias = weight(*in["self"], 1);
    if (!bias || !in["mat2"]->contains("as_tensor") || !in["mat1"]->contains("as_tensor")) continue;
    std::string p = (*in["mat2"])["as_tensor"].at("name").get<std::string>();
    auto pi = producer_.find(p);
    if (pi == producer_.end() || users_[p].size() != 1 || graph_outputs().count(p)) continue;
    const json& perm = *nodes_[pi->second];
    std::string pt = perm.at("target").get<std::string>();
    const json& pin = perm.at("inputs");
    bool transpose = pt == "torch.ops.aten.t.default" && pin.size() == 1;
    if (pt == "torch.ops.aten.permute.default" && pin.size() == 2 &&
        pin[1].at("arg").contains("as_ints"))
      transpose = pin[1]["arg"]["as_ints"] == json::array({1, 0});
    if (!transpose) continue;
    auto w = weight(pin[0].at("arg"), 2);
    if (!w) continue;
    dropped_[pi->second] = true;
    users_.erase(p);
    linear_[static_cast<int>(b)] = {(*in["mat1"])["as_tensor"].at("name").get<std::string>(), *w,
                                    *bias};
  }
}

void Builder::read_nodes() {
  StackEntry root_entry{"", "", ""};  // its class when a stack names it (build_modules: Module)
  root_ = new_call(nullptr, root_entry, "");
  node_call_.assign(nodes_.size(), nullptr);
  dropped_.assign(nodes_.size(), false);
  std::vector<std::vector<std::string>> uses(nodes_.size());
  for (size_t i = 0; i < nodes_.size(); ++i) {
    const json& n = *nodes_[i];
    std::string target = field(n, "target").get<std::string>();
    if (is_dropped(target)) {
      dropped_[i] = true;
      continue;
    }
    for (const json& in : field(n, "inputs")) collect_uses(field(in, "arg"), uses[i]);
    std::vector<std::string> defs;
    for (const json& o : field(n, "outputs")) collect_defs(o, defs);
    for (const auto& d : defs) producer_[d] = static_cast<int>(i);
    Call* c = root_;
    std::string stack =
        n.contains("metadata") ? n["metadata"].value("nn_module_stack", std::string()) : "";
    bool any = false;
    for (const StackEntry& e : parse_stack(stack)) {
      any = true;
      if (e.path.empty()) {  // the root module
        if (c == root_ && !e.cls.empty()) root_->cls = e.cls;
        continue;
      }
      auto p = normalize_path(e.path);
      if (!p || p->empty()) continue;  // not a module attribute path: stays in its caller
      auto it = c->by_key.find(e.key);
      c = it != c->by_key.end() ? it->second : new_call(c, e, *p);
    }
    node_call_[i] = any ? c : nullptr;
  }
  // Scalar nodes whose results only fed dropped asserts go too.
  for (size_t r = nodes_.size(); r-- > 0;) {
    int i = static_cast<int>(r);
    if (dropped_[i]) continue;
    if (is_scalar_node(i)) {
      std::vector<std::string> defs;
      for (const json& o : nodes_[i]->at("outputs")) collect_defs(o, defs);
      bool used = false;
      for (const auto& d : defs) used = used || graph_outputs().count(d) || live_[d];
      if (!used) {
        dropped_[i] = true;
        continue;
      }
    }
    for (const auto& u : uses[i]) live_[u] = true;
  }
  for (size_t i = 0; i < nodes_.size(); ++i)
    if (!dropped_[i])
      for (const auto& u : uses[i]) users_[u].push_back(static_cast<int>(i));
  fold_linear();
  // Scalar nodes and nodes without a stack go to the innermost call holding them and their uses.
  for (size_t r = nodes_.size(); r-- > 0;) {
    int i = static_cast<int>(r);
    if (dropped_[i] || (node_call_[i] && !is_scalar_node(i))) continue;
    std::vector<std::string> defs;
    for (const json& o : nodes_[i]->at("outputs")) collect_defs(o, defs);
    Call* lca = node_call_[i];
    for (const auto& d : defs) {
      if (graph_outputs().count(d)) lca = root_;
      for (int u : users_[d])
        lca = lca ? common(lca, node_call_[u] ? node_call_[u] : root_) : node_call_[u];
    }
    node_call_[i] = lca ? lca : root_;
  }
  for (size_t i = 0; i < nodes_.size(); ++i)
    if (!dropped_[i]) node_call_[i]->nodes.push_back(static_cast<int>(i));
}

// The values the graph returns.
const std::set<std::string>& Builder::graph_outputs() {
  if (!outputs_read_) {
    std::vector<std::string> names;
    for (const json& o : field(*graph_, "outputs")) collect_uses(o, names);
    outputs_.insert(names.begin(), names.end());
    outputs_read_ = true;
  }
  return outputs_;
}

int Builder::depth(const Call* c) {
  int d = 0;
  for (; c->parent; c = c->parent) ++d;
  return d;
}

Call* Builder::common(Call* a, Call* b) {
  int da = depth(a), db = depth(b);
  for (; da > db; --da) a = a->parent;
  for (; db > da; --db) b = b->parent;
  while (a != b) {
    a = a->parent;
    b = b->parent;
  }
  return a;
}

bool Builder::contains(const Call* outer, const Call* inner) {
  for (; inner; inner = inner->parent)
    if (inner == outer) return true;
  return false;
}

}  // namespace tt::pt2
