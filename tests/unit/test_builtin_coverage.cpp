// Every TorchScript-only operator LibTorch registers is lifted (an op table row, or exactly
// through torch.ops: Note [TorchScript builtins without a row]) or named, with its reason, in
// testdata/builtins/jit_only_operators.txt (structural / unreachable / todo). A LibTorch upgrade
// that registers a new builtin fails here and names it.
#include <doctest/doctest.h>
#include "source_dir.h"

#include "exec/dispatch.h"
#include "ir/op_table.h"
#include "loaders/jit_builtins.h"

#include <ATen/ATen.h>

#include <filesystem>
#include <fstream>
#include <set>
#include <sstream>

using namespace tt;
namespace fs = std::filesystem;

namespace {

struct Entry {
  std::string cls, pattern, reason;
  int line = 0;
  bool used = false;
};

std::vector<Entry> read_entries() {
  fs::path p = fs::path(TT_SOURCE_DIR) / "testdata" / "builtins" / "jit_only_operators.txt";
  std::ifstream in(p);
  REQUIRE(in.good());
  std::vector<Entry> out;
  std::string line;
  for (int no = 1; std::getline(in, line); ++no) {
    if (line.empty() || line[0] == '#') continue;
    std::istringstream is(line);
    Entry e;
    e.line = no;
    is >> e.cls >> e.pattern;
    std::getline(is, e.reason);
    INFO("line " << no << ": " << line);
    CHECK((e.cls == "structural" || e.cls == "unreachable" || e.cls == "todo"));
    CHECK(e.reason.find_first_not_of(' ') != std::string::npos);
    out.push_back(e);
  }
  return out;
}

// '*' matches any text (also none).
bool matches(const char* p, const char* s) {
  if (*p == '\0') return *s == '\0';
  if (*p == '*') return matches(p + 1, s) || (*s != '\0' && matches(p, s + 1));
  return *s == *p && matches(p + 1, s + 1);
}
bool matches(const std::string& pattern, const std::string& name) {
  return matches(pattern.c_str(), name.c_str());
}

}  // namespace

TEST_CASE("builtin coverage: every TorchScript-only operator is lifted or has a reason") {
  std::vector<Entry> entries = read_entries();
  const auto& ops = jit_only_operators();
  CHECK(ops.size() > 700);  // LibTorch 2.6 registers 781
  std::vector<std::string> neither, both;
  size_t rows = 0, torch_ops = 0, listed = 0;
  for (const JitBuiltin& b : ops) {
    bool row = find_op_by_aten(b.name) != nullptr;
    bool lifted = row || b.torch_ops_exact;
    Entry* e = nullptr;
    for (Entry& x : entries)
      if (matches(x.pattern, b.name)) {
        x.used = true;
        if (!e) e = &x;
      }
    rows += row;
    torch_ops += !row && b.torch_ops_exact;
    listed += !lifted && e;
    if (!lifted && !e) neither.push_back(b.schema);
    if (lifted && e && e->cls == "todo")
      both.push_back(b.schema + " (line " + std::to_string(e->line) + ")");
  }
  std::string neither_text, both_text;
  for (const auto& s : neither) neither_text += "\n  " + s;
  for (const auto& s : both) both_text += "\n  " + s;
  INFO("rows " << rows << ", through torch.ops " << torch_ops << ", listed " << listed);
  INFO("neither lifted nor listed:" << neither_text);
  CHECK(neither.empty());
  INFO("lifted but still listed as todo:" << both_text);
  CHECK(both.empty());
  for (const Entry& e : entries) {
    INFO("line " << e.line << " names no registered operator: " << e.pattern);
    CHECK(e.used);
  }
}

// The registry runner computes what TorchScript computes, also where Python would not.
TEST_CASE("builtin coverage: the interpreter runs builtins through LibTorch's registry") {
  using c10::IValue;
  auto run1 = [](const std::string& op, std::vector<IValue> in) {
    auto r = call_aten(op, std::move(in));
    REQUIRE(r.has_value());
    REQUIRE(r->size() == 1);
    return (*r)[0];
  };
  CHECK(run1("aten::str", {IValue(0.1)}).toStringRef() == "0.10000000000000001");
  CHECK(run1("str", {IValue(int64_t{3})}).toStringRef() == "3");
  CHECK(run1("operator.add", {IValue(std::string("a")), IValue(std::string("b"))}).toStringRef() ==
        "ab");
  IValue rep = run1("operator.mul", {IValue(c10::List<int64_t>({0})), IValue(int64_t{3})});
  CHECK(rep.toIntVector() == std::vector<int64_t>{0, 0, 0});
  CHECK(run1("max", {IValue(int64_t{2}), IValue(int64_t{5})}).toInt() == 5);
  CHECK(run1("min", {IValue(c10::List<int64_t>({4, 1, 3}))}).toInt() == 1);
  // TorchScript's float max is `a if a > b else b`: nan on the right wins (Python keeps 1.0).
  CHECK(std::isnan(run1("prim::max.float", {IValue(1.0), IValue(std::nan(""))}).toDouble()));
  CHECK(run1("aten::__derive_index.default",
             {IValue(int64_t{2}), IValue(int64_t{1}), IValue(int64_t{3})})
            .toInt() == 7);
  CHECK(run1("aten::format", {IValue(std::string("{} and {}")), IValue(1.5), IValue(int64_t{2})})
            .toStringRef() == "1.5 and 2");
  // No overload fits: nullopt, not a throw.
  CHECK(!call_aten("aten::__derive_index.default", {IValue(std::string("x"))}).has_value());
}
