// The torch.export module builder (builder.h): one method graph per call, and the model's result in
// its signature's structure.
#include "loaders/export/builder.h"

#include <functional>

namespace tt::pt2 {

c10::TypePtr Builder::type_of(const std::string& name) const {
  auto it = kinds_.find(name);
  Kind k = it == kinds_.end() ? Kind::Tensor : it->second;
  switch (k) {
    case Kind::Int:
      return c10::IntType::get();
    case Kind::Float:
      return c10::FloatType::get();
    case Kind::Bool:
      return c10::BoolType::get();
    case Kind::Tensor:
      break;
  }
  return c10::TensorType::get();
}

// The static type of a model input (dtype and sizes when every size is a number).
c10::TypePtr Builder::input_type(const std::string& name) const {
  const json& tv = graph_->value("tensor_values", json::object());
  if (!tv.contains(name)) return c10::TensorType::get();
  const json& meta = tv[name];
  auto st = scalar_type(meta.value("dtype", int64_t{0}));
  std::vector<int64_t> sizes;
  bool all_static = true;
  for (const json& s : meta.value("sizes", json::array())) {
    if (s.contains("as_int"))
      sizes.push_back(s["as_int"].get<int64_t>());
    else
      all_static = false;
  }
  if (!st) return c10::TensorType::get();
  if (!all_static) return c10::TensorType::get()->withScalarType(*st);
  return c10::TensorType::createContiguous(*st, c10::Device(c10::kCPU), sizes);
}

jit::Value* Builder::add_input(Method& m, const std::string& key, const c10::TypePtr& type,
                               const std::string& debug) {
  if (m.call == root_)
    throw Error(ExitCode::Internal, "export: value " + key + " used before it is defined");
  jit::Value* v = m.g->addInput();
  v->setType(type);
  if (!debug.empty()) v->setDebugName(debug);
  m.inputs.push_back(key);
  return v;
}

// A module object in m: a GetAttr chain from self when it is inside m's module, else an input.
jit::Value* Builder::object(Method& m, const std::string& path) {
  auto it = m.objects.find(path);
  if (it != m.objects.end()) return it->second;
  const std::string& own = m.call->path;
  jit::Value* v = nullptr;
  if (path == own) {
    v = m.self;
  } else if (under(own, path)) {
    auto dot = path.rfind('.');
    std::string parent = dot == std::string::npos ? "" : path.substr(0, dot);
    v = m.g->insertGetAttr(object(m, parent),
                           dot == std::string::npos ? path : path.substr(dot + 1));
  } else {
    v = add_input(m, "@module:" + path, mods_.at(path).module.type(), "");
  }
  m.objects[path] = v;
  return v;
}

jit::Value* Builder::value(Method& m, const std::string& name) {
  auto it = m.env.find(name);
  if (it != m.env.end()) return it->second;
  jit::Value* v = nullptr;
  auto w = weights_.find(name);
  if (w != weights_.end() && under(m.call->path, w->second.target)) {
    const std::string& t = w->second.target;
    auto dot = t.rfind('.');
    jit::Value* owner = object(m, dot == std::string::npos ? "" : t.substr(0, dot));
    v = m.g->insertGetAttr(owner, dot == std::string::npos ? t : t.substr(dot + 1));
    return v;  // a fresh read per use, as the tracer records them
  }
  v = add_input(m, name, type_of(name), name);
  m.env[name] = v;
  return v;
}

Builder::Method Builder::build_method(Call* c, const json& call_graph) {
  Method m;
  m.call = c;
  m.g = std::make_shared<jit::Graph>();
  jit::Module& mod = mods_.at(c->path).module;
  m.self = m.g->addInput("self");
  m.self->setType(mod.type());
  m.objects[c->path] = m.self;
  if (c == root_)
    for (const auto& name : user_inputs_) {
      jit::Value* v = m.g->addInput(name);
      v->setType(input_type(name));
      m.env[name] = v;
    }
  for (auto& [i, sub] : c->items) {
    if (!sub) {
      emit_node(m, i);
      continue;
    }
    Method s = build_method(sub, call_graph);
    std::vector<jit::Value*> args = {object(m, sub->path)};
    for (const auto& key : s.inputs)
      args.push_back(key.rfind("@module:", 0) == 0 ? object(m, key.substr(8)) : value(m, key));
    jit::Node* call = m.g->create(c10::prim::CallMethod, args, 1);
    call->s_(c10::attr::name, sub->method);
    m.g->insertNode(call);
    jit::Value* r = call->output();
    r->setType(s.g->outputs().at(0)->type());
    if (sub->outputs.size() == 1) {
      r->setDebugName(sub->outputs[0]);
      m.env[sub->outputs[0]] = r;
    } else if (sub->outputs.size() > 1) {
      jit::Node* un = m.g->insertNode(m.g->createTupleUnpack(r));
      for (size_t k = 0; k < sub->outputs.size(); ++k) {
        un->output(k)->setDebugName(sub->outputs[k]);
        m.env[sub->outputs[k]] = un->output(k);
      }
    }
  }
  if (c == root_) {
    m.g->registerOutput(root_result(m, call_graph));
  } else {
    std::vector<jit::Value*> outs;
    for (const auto& o : c->outputs) {
      auto it = m.env.find(o);
      TT_ASSERT(it != m.env.end(),
                "export: result " + o + " of " + c->path + " not computed there");
      outs.push_back(it->second);
    }
    if (outs.size() == 1)
      m.g->registerOutput(outs[0]);
    else if (outs.empty())
      m.g->registerOutput(m.g->insertConstant(IValue()));
    else
      m.g->registerOutput(m.g->insertNode(m.g->createTuple(outs))->output());
  }
  c10::ClassTypePtr type = mod.type();
  jit::Function* fn = cu_->create_function(c10::QualifiedName(*type->name(), c->method), m.g);
  type->addMethod(fn);
  return m;
}

jit::Value* Builder::output_value(Method& m, const json& arg) {
  auto [k, v] = union_member(arg);
  if (k == "as_tensor") return value(m, v->at("name").get<std::string>());
  if ((k == "as_sym_int" || k == "as_sym_float" || k == "as_sym_bool") && v->contains("as_name"))
    return value(m, (*v)["as_name"].get<std::string>());
  if (k == "as_none") return m.g->insertConstant(IValue());
  if (k == "as_int" || (k == "as_sym_int" && v->contains("as_int")))
    return m.g->insertConstant(k == "as_int" ? v->get<int64_t>() : (*v)["as_int"].get<int64_t>());
  if (k == "as_float") return m.g->insertConstant(v->get<double>());
  if (k == "as_bool") return m.g->insertConstant(v->get<bool>());
  throw Error(ExitCode::Unsupported, "the exported model returns a " + k +
                                         " — return tensors (or tuples, lists, dicts of them)");
}

jit::Value* Builder::root_result(Method& m, const json& call_graph) {
  std::vector<jit::Value*> flat;
  for (const json& o : field(*graph_, "outputs")) flat.push_back(output_value(m, o));
  json spec;
  for (const json& e : call_graph)
    if (e.value("fqn", std::string("?")).empty() && e.contains("signature") &&
        e["signature"].is_object())
      try {
        spec = json::parse(e["signature"].value("out_spec", std::string()));
      } catch (const json::exception&) {
      }
  size_t next = 0;
  std::function<jit::Value*(const json&)> build = [&](const json& s) -> jit::Value* {
    std::string type =
        s.contains("type") && s["type"].is_string() ? s["type"].get<std::string>() : "";
    const json& kids = s.value("children_spec", json::array());
    if (type.empty()) {
      if (next >= flat.size()) malformed("out_spec has more leaves than the graph has outputs");
      return flat[next++];
    }
    std::vector<jit::Value*> items;
    for (const json& k : kids) items.push_back(build(k));
    if (type == "builtins.list") {
      c10::TypePtr et = items.empty() ? c10::TensorType::get() : items[0]->type();
      for (jit::Value* it : items)
        if (*it->type() != *et) return m.g->insertNode(m.g->createTuple(items))->output();
      return m.g->insertNode(m.g->createList(et, items))->output();
    }
    if (type == "builtins.dict" || type == "collections.OrderedDict") {
      json keys = json::parse(s.value("context", std::string("[]")));
      std::vector<jit::Value*> kv;
      bool ok = keys.is_array() && keys.size() == items.size() && !items.empty();
      for (size_t i = 0; ok && i < keys.size(); ++i) {
        ok = keys[i].is_string() && *items[i]->type() == *items[0]->type();
        if (ok) kv.push_back(m.g->insertConstant(keys[i].get<std::string>()));
      }
      if (ok)
        return m.g->insertNode(m.g->createDict(c10::StringType::get(), items[0]->type(), kv, items))
            ->output();
    } else if (type != "builtins.tuple" && diags_) {
      diags_->warn("export-output", "the exported model returns a " + type +
                                        "; the converted model returns its fields as a tuple");
    }
    return m.g->insertNode(m.g->createTuple(items))->output();
  };
  jit::Value* r = nullptr;
  if (spec.is_array() && spec.size() == 2) {
    r = build(spec[1]);
    if (next != flat.size()) r = nullptr;
  }
  if (!r) r = flat.size() == 1 ? flat[0] : m.g->insertNode(m.g->createTuple(flat))->output();
  return r;
}

}  // namespace tt::pt2
