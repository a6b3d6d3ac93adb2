// The op table's consistency (lib/ir/op_table.h): rows, facts and the module lowerings agree.
#include "emitters/pysrc.h"
#include "exec/interpreter.h"
#include "ir/module_lowering.h"
#include "ir/op_table.h"
#include "ir/quant.h"
#include "loaders/jit_builtins.h"

#include <ATen/core/dispatch/Dispatcher.h>
#include <doctest/doctest.h>

#include <set>
#include <string>

using namespace tt;

TEST_CASE("op table: names are unique and every row is found by its name") {
  std::set<std::string> seen;
  for (const OpInfo& op : all_ops()) {
    CAPTURE(op.name);
    CHECK(seen.insert(op.name).second);
    CHECK(find_op(op.name) == &op);
  }
}

TEST_CASE("op table: every ATen overload of a function or method row is found again") {
  for (const OpInfo& op : all_ops()) {
    if (op.kind != OpKind::Function && op.kind != OpKind::Method) continue;
    if (op.facts & kInputsNotAtenOrder)
      continue;  // not reachable by ATen name (Note [Op table rows])
    for (const std::string& a : op.aten) {
      CAPTURE(op.name);
      CAPTURE(a);
      const OpInfo* back = find_op_by_aten(a);
      REQUIRE(back != nullptr);
      // Two rows may share an overload (the first one wins); it must spell the same ATen op.
      CHECK((back == &op || back->kind == OpKind::Function || back->kind == OpKind::Method));
    }
  }
}

TEST_CASE("op table: the ATen overloads of torch.*, Tensor.* and F.* rows exist") {
  // TorchScript builtins outside the dispatcher (the interpreter evaluates them itself,
  // lib/exec/dispatch.cpp, or runs them through the JIT's registry, lib/loaders/jit_builtins.h)
  // are the only ones the dispatcher does not know.
  const std::set<std::string> builtins = {
      "aten::is_contiguous", "aten::is_contiguous.memory_format", "aten::Int.Tensor",
      "aten::Float.Tensor", "aten::Bool.Tensor", "aten::tensor.int", "aten::tensor.float",
      "aten::tensor.bool", "aten::tensor", "aten::size", "aten::dim", "aten::numel", "aten::split",
      "aten::format", "aten::is_autocast_enabled", "aten::is_grad_enabled", "prim::dtype",
      "prim::device", "prim::is_nested", "prim::is_cuda", "prim::requires_grad",
      // TorchScript's twins of dispatcher ops (the row lists the dispatcher one first)
      "aten::index.Tensor_hacked_twin", "aten::index_put.hacked_twin", "aten::numpy_T.a",
      "aten::mT.a", "aten::matrix_H.a", "aten::mH.a"};
  std::set<std::string> missing;
  for (const OpInfo& op : all_ops()) {
    if (op.kind != OpKind::Function && op.kind != OpKind::Method) continue;
    if (op.name.rfind("torch.", 0) != 0 && op.name.rfind("Tensor.", 0) != 0 &&
        op.name.rfind("F.", 0) != 0)
      continue;
    for (const std::string& q : op.aten) {
      size_t sep = q.find("::"), dot = q.find('.', sep + 2);
      std::string name = q.substr(0, dot),
                  overload = dot == std::string::npos ? "" : q.substr(dot + 1);
      if (!c10::Dispatcher::singleton().findSchema({name, overload}) && !builtins.count(q) &&
          !find_jit_only_operator(q))
        missing.insert(op.name + " " + q);
    }
  }
  CHECK(missing == std::set<std::string>{});
}

TEST_CASE("op table: facts sit on rows of the right kind") {
  for (const OpInfo& op : all_ops()) {
    CAPTURE(op.name);
    if (op.facts & kPureOp) CHECK(op.kind == OpKind::Prim);
    if (op.facts & kReturnsInput) CHECK(op.kind == OpKind::Module);
    if (op.facts & kInplaceKeyword) CHECK(op.kind == OpKind::Module);
    if (op.facts & kKeepsInputShape) CHECK(op.kind != OpKind::Prim);
    if (op.facts & kMayAliasInput)
      CHECK((op.kind == OpKind::Function || op.kind == OpKind::Method));
    if (op.facts & kSharesInputItems)
      CHECK((op.kind == OpKind::Function || op.kind == OpKind::Method));
    if (op.facts & kInputsNotAtenOrder) CHECK(op.kind == OpKind::Function);
    if (op.facts & kVarargs) CHECK(op.kind == OpKind::Function);
    if (op.facts & kWritesContainer)
      CHECK((op.kind == OpKind::Function || op.kind == OpKind::Method));
  }
  CHECK(op_has("list.append", kWritesContainer));
  CHECK(op_has("operator.setitem", kWritesContainer));
  CHECK_FALSE(op_has("operator.getitem", kWritesContainer));
  // A dict's values, items, get and copy hold the dict's own objects (a list value appended to
  // through them is the dict's); reading them writes nothing.
  for (const char* reader : {"dict.keys", "dict.values", "dict.items", "dict.get", "dict.copy"}) {
    CAPTURE(reader);
    CHECK(op_has(reader, kSharesInputItems));
    CHECK_FALSE(op_has(reader, kWritesContainer));
  }
  CHECK(op_has("Tensor.view", kMayAliasInput));
  CHECK_FALSE(op_has("torch.add", kMayAliasInput));
  CHECK(op_has("list.slice", kSharesInputItems));
  CHECK(op_has("F.interpolate", kInputsNotAtenOrder));
  CHECK(find_op_by_aten("aten::upsample_nearest2d.vec") != find_op("F.interpolate"));
  CHECK(op_has("prim.ListConstruct", kPureOp));
  CHECK_FALSE(op_has("prim.RaiseException", kPureOp));
  CHECK(op_has("nn.Dropout2d", kReturnsInput));
  CHECK(op_has("F.relu", kKeepsInputShape));
  CHECK_FALSE(op_has("nn.Conv2d", kKeepsInputShape));
  CHECK_FALSE(op_has("no.such_op", kPureOp));
}

TEST_CASE("op table: every functional form names a function row and a module with a lowering") {
  REQUIRE(!functional_module_rows().empty());
  for (const OpInfo* m : functional_module_rows()) {
    CAPTURE(m->name);
    CHECK(m->kind == OpKind::Module);
    CHECK(pysrc::is_identifier(m->attr_stem));
    const OpInfo* f = find_op_by_aten(m->functional_aten);
    REQUIRE(f != nullptr);
    CHECK(f->kind == OpKind::Function);
    CHECK(has_module_lowering(m->name));
  }
}

TEST_CASE("op table: the module rows the interpreter cannot run are exactly the known gaps") {
  // Lifted and written as modules, but --verify, constant folding and --emit torchscript refuse
  // them (exit 4). Adding a lowering (lib/ir/module_lowering.cpp) removes a name from this list.
  const std::set<std::string> gaps = {"nn.AlphaDropout",        "nn.Dropout1d",  "nn.Dropout3d",
                                      "nn.FeatureAlphaDropout", "nn.LogSoftmax", "nn.Unflatten"};
  std::set<std::string> missing;
  for (const OpInfo& op : all_ops())
    if (op.kind == OpKind::Module && !has_module_lowering(op.name)) missing.insert(op.name);
  CHECK(missing == gaps);
}

TEST_CASE("op table: ATen facts by name") {
  CHECK(aten_has("append", kMutatesByName));
  CHECK(aten_has("randn", kRandom));
  CHECK(aten_has("unsqueeze_", kMetadataInplace));
  CHECK(aten_has("dropout", kReturnsInputSometimes));
  CHECK(aten_has("argmax", kNonFloatResult));
  CHECK(aten_has("topk", kIndicesSecond));
  CHECK_FALSE(aten_has("relu", kRandom));
  CHECK_FALSE(aten_has("add_", kMutatesByName));  // in-place by its name, not listed
  CHECK_FALSE(aten_has("aten::randn", kRandom));  // names come without namespace
  CHECK(aten_base_has("aten::randn", kRandom));   // ... unless asked by qualified base
  CHECK_FALSE(aten_base_has("prim::randn", kRandom));
}

TEST_CASE("op table: every module row has a Python signature, and every signature is well-formed") {
  // Module rows built otherwise: the intrinsic modules from their parts' constructors (Note
  // [Composite modules] in lib/ir/quant.h), FloatFunctional and QFunctional with no arguments,
  // and the quantization stubs, which have no attributes (their qconfig is set by the user).
  auto built_otherwise = [](const OpInfo& op) {
    return composite_parts(op.name) != nullptr || op.name.rfind("FloatFunctional.", 0) == 0 ||
           op.name.rfind("QFunctional.", 0) == 0 || op.name == "quant.QuantStub" ||
           op.name == "quant.DeQuantStub";
  };
  for (const OpInfo& op : all_ops()) {
    if (op.kind != OpKind::Module) continue;
    CAPTURE(op.name);
    CHECK((python_signature(op.name) != nullptr) != built_otherwise(op));
  }
  REQUIRE(!python_signatures().empty());
  for (const auto& [name, sig] : python_signatures()) {
    CAPTURE(name);
    CHECK(python_signature(name) == &sig);
    std::set<std::string> seen;
    bool defaulted = false;
    for (const PyParam& p : sig) {
      CAPTURE(p.name);
      CHECK(pysrc::is_identifier(p.name));
      CHECK(seen.insert(p.name).second);
      if (p.def) CHECK(!p.def->empty());
      CHECK((p.def || !defaulted));  // required parameters before defaulted ones
      defaulted = defaulted || p.def.has_value();
    }
    // A function signature names exactly the parameters of its py_args, with a default for every
    // keyword one.
    const OpInfo* op = find_op(name);
    if (op && op->kind == OpKind::Function) {
      REQUIRE(op->py_args.size() == sig.size());
      for (size_t i = 0; i < sig.size(); ++i)
        if (!op->py_args[i].empty()) CHECK((op->py_args[i] == sig[i].name && sig[i].def));
    }
  }
  CHECK(python_signature("nn.Softsign") != nullptr);  // a constructor without a row
  CHECK(find_op("nn.Softsign") == nullptr);
  CHECK(python_signature("nn.Conv2d")->front().name == "in_channels");
  CHECK(python_signature("F.relu") == nullptr);
}

TEST_CASE("op table: spellings without a row stand for their ATen base") {
  CHECK(spelled_aten_base("Tensor.foo") == "aten::foo");
  CHECK(spelled_aten_base("torch.foo") == "aten::foo");
  CHECK(spelled_aten_base("F.foo") == "aten::foo");
  CHECK(spelled_aten_base("F.") == "");
  CHECK(spelled_aten_base("nn.Foo") == "");
  CHECK(std::string(python_tensor_comparison("torch.ge")) == ">=");
  CHECK(std::string(python_tensor_arithmetic("torch.div")) == "/");
  CHECK(python_tensor_arithmetic("torch.gt") == nullptr);
}
