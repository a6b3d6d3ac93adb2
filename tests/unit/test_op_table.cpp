// The op table's consistency (lib/ir/op_table.h): rows, facts and the module lowerings agree.
#include "emitters/pysrc.h"
#include "exec/interpreter.h"
#include "ir/op_table.h"

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
    if (op.name == "F.interpolate") continue;  // inputs not in ATen order (Note [Op table rows])
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

TEST_CASE("op table: facts sit on rows of the right kind") {
  for (const OpInfo& op : all_ops()) {
    CAPTURE(op.name);
    if (op.facts & kPureOp) CHECK(op.kind == OpKind::Prim);
    if (op.facts & kReturnsInput) CHECK(op.kind == OpKind::Module);
    if (op.facts & kInplaceKeyword) CHECK(op.kind == OpKind::Module);
    if (op.facts & kKeepsInputShape) CHECK(op.kind != OpKind::Prim);
  }
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
  // them (exit 4). Adding a lowering (lib/exec/modules.cpp) removes a name from this list.
  const std::set<std::string> gaps = {"nn.AlphaDropout", "nn.Dropout1d", "nn.Dropout3d",
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
  CHECK(aten_base_has("aten::randn", kRandom));    // ... unless asked by qualified base
  CHECK_FALSE(aten_base_has("prim::randn", kRandom));
}
