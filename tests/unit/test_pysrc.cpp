// The Python-source toolkit (lib/emitters/pysrc.h): quoting, Python's float repr, list and tuple
// displays, identifier checks, attribute paths and name allocation. The expected float texts are
// what CPython's repr() prints.
#include "emitters/pysrc.h"

#include <doctest/doctest.h>

#include <cmath>
#include <limits>
#include <set>

using namespace tt::pysrc;

TEST_CASE("pysrc: py_str quotes quotes, backslashes and control characters") {
  CHECK(py_str("") == "\"\"");
  CHECK(py_str("conv1") == "\"conv1\"");
  CHECK(py_str("say \"hi\"") == "\"say \\\"hi\\\"\"");
  CHECK(py_str("a\\b") == "\"a\\\\b\"");
  CHECK(py_str("'single'") == "\"'single'\"");
  CHECK(py_str("l1\nl2\r\tx") == "\"l1\\nl2\\r\\tx\"");
  CHECK(py_str(std::string("\x01", 1)) == "\"\\x01\"");
  CHECK(py_str(std::string("a\0b", 3)) == "\"a\\x00b\"");
  CHECK(py_str("\x1b[0m") == "\"\\x1b[0m\"");
  CHECK(py_str("\x7f") == "\"\\x7f\"");
}

TEST_CASE("pysrc: py_str keeps non-ASCII bytes (UTF-8) as they are") {
  CHECK(py_str("caf\xc3\xa9") == "\"caf\xc3\xa9\"");            // café
  CHECK(py_str("\xe2\x86\x92") == "\"\xe2\x86\x92\"");          // →
  CHECK(py_str("\xf0\x9f\x99\x82") == "\"\xf0\x9f\x99\x82\"");  // 🙂
}

TEST_CASE("pysrc: py_float is Python's repr") {
  CHECK(py_float(0.1) == "0.1");
  CHECK(py_float(1e-5) == "1e-05");
  CHECK(py_float(0.0001) == "0.0001");
  CHECK(py_float(2.5e-7) == "2.5e-07");
  CHECK(py_float(1e20) == "1e+20");
  CHECK(py_float(1e16) == "1e+16");
  CHECK(py_float(1e15) == "1000000000000000.0");
  CHECK(py_float(0.0) == "0.0");
  CHECK(py_float(-0.0) == "-0.0");
  CHECK(py_float(-1.5) == "-1.5");
  CHECK(py_float(1.0 / 3.0) == "0.3333333333333333");
  CHECK(py_float(5e-324) == "5e-324");
  CHECK(py_float(std::numeric_limits<double>::max()) == "1.7976931348623157e+308");
}

TEST_CASE("pysrc: py_float writes integers as floats") {
  CHECK(py_float(1.0) == "1.0");
  CHECK(py_float(3.0) == "3.0");
  CHECK(py_float(100.0) == "100.0");
  CHECK(py_float(-2.0) == "-2.0");
  CHECK(py_float(123456789.0) == "123456789.0");
  CHECK(py_float(1024.0f) == "1024.0");
}

TEST_CASE("pysrc: py_float of inf and nan") {
  double inf = std::numeric_limits<double>::infinity();
  CHECK(py_float(inf) == "float(\"inf\")");
  CHECK(py_float(-inf) == "-float(\"inf\")");
  CHECK(py_float(std::nan("")) == "float(\"nan\")");
  CHECK(py_float(std::numeric_limits<float>::infinity()) == "float(\"inf\")");
  CHECK(py_float(std::numeric_limits<float>::quiet_NaN()) == "float(\"nan\")");
}

TEST_CASE("pysrc: py_float of a float32 prints float32's shortest digits") {
  CHECK(py_float(0.1f) == "0.1");
  CHECK(py_float(1e-5f) == "1e-05");
  CHECK(py_float(-0.0f) == "-0.0");
  CHECK(py_float(16777216.0f) == "16777216.0");
  // The same value as a double has all its digits.
  CHECK(py_float(static_cast<double>(0.1f)) == "0.10000000149011612");
}

TEST_CASE("pysrc: number lists, list and tuple displays") {
  CHECK(int_items({1, -2, 3}) == std::vector<std::string>{"1", "-2", "3"});
  CHECK(float_items({0.5, 1.0, 1e-5}) == std::vector<std::string>{"0.5", "1.0", "1e-05"});
  CHECK(py_list({}) == "[]");
  CHECK(py_list({"1"}) == "[1]");
  CHECK(py_list(int_items({1, 2})) == "[1, 2]");
  CHECK(py_tuple({}) == "()");
  CHECK(py_tuple({"1"}) == "(1,)");
  CHECK(py_tuple(float_items({2.0, 3.5})) == "(2.0, 3.5)");
  CHECK(std::string(py_bool(true)) == "True");
  CHECK(std::string(py_bool(false)) == "False");
}

TEST_CASE("pysrc: keywords and identifiers") {
  for (const char* kw :
       {"None", "True", "False", "class", "lambda", "yield", "async", "await", "nonlocal"}) {
    CHECK(is_keyword(kw));
    CHECK(is_name(kw));
    CHECK_FALSE(is_identifier(kw));
  }
  // Soft keywords and builtins are identifiers.
  for (const char* id :
       {"match", "case", "type", "self", "print", "x", "_", "_x1", "conv1", "Model"}) {
    CHECK_FALSE(is_keyword(id));
    CHECK(is_identifier(id));
  }
  for (const char* bad : {"", "1x", "0", "a.b", "a-b", "a b", "caf\xc3\xa9", "x$"}) {
    CHECK_FALSE(is_name(bad));
    CHECK_FALSE(is_identifier(bad));
  }
  CHECK(all_digits("0123"));
  CHECK_FALSE(all_digits(""));
  CHECK_FALSE(all_digits("12a"));
}

TEST_CASE("pysrc: split and join") {
  CHECK(split("layer1.0.conv1", '.') == std::vector<std::string>{"layer1", "0", "conv1"});
  CHECK(split("a..b", '.') == std::vector<std::string>{"a", "", "b"});
  CHECK(split("", '.') == std::vector<std::string>{""});
  CHECK(join({}) == "");
  CHECK(join({"a"}) == "a");
  CHECK(join({"a", "b", "c"}) == "a, b, c");
  CHECK(join({"a", "b"}, ".") == "a.b");
}

TEST_CASE("pysrc: expressions, attribute paths and assignments") {
  CHECK(receiver(Expr("x")) == "x");
  CHECK(receiver(Expr("a + b", false)) == "(a + b)");
  CHECK(not_expr(Expr("ok")) == "not ok");
  CHECK(not_expr(Expr("a == b", false)) == "not (a == b)");
  // precedence: parentheses exactly where Python needs them
  Expr a("a"), b("b"), c("c"), neg("-1", false);
  Expr sum = binary_expr(a, "+", b);
  CHECK(sum.text == "a + b");
  CHECK(!sum.atomic());
  CHECK(binary_expr(sum, "*", c).text == "(a + b) * c");
  CHECK(binary_expr(c, "*", sum).text == "c * (a + b)");
  CHECK(binary_expr(c, "-", sum).text == "c - (a + b)");  // left-associative
  CHECK(binary_expr(sum, "-", c).text == "a + b - c");
  CHECK(binary_expr(binary_expr(a, "*", b), "+", c).text == "a * b + c");
  CHECK(binary_expr(binary_expr(a, "%", b), "//", c).text == "a % b // c");
  CHECK(binary_expr(a, "//", binary_expr(b, "%", c)).text == "a // (b % c)");
  CHECK(binary_expr(neg, "**", a).text == "(-1) ** a");
  CHECK(binary_expr(a, "**", neg).text == "a ** -1");
  CHECK(binary_expr(binary_expr(a, "**", b), "**", c).text == "(a ** b) ** c");  // right-assoc.
  CHECK(binary_expr(a, "-", neg).text == "a - -1");
  CHECK(binary_expr(binary_expr(a, "<", b), "<", c).text == "(a < b) < c");  // would chain
  CHECK(binary_expr(sum, "==", c).text == "a + b == c");
  CHECK(binary_expr(binary_expr(a, "==", b), "and", c).text == "a == b and c");
  CHECK(binary_expr(a, "in", sum).text == "a in a + b");
  CHECK(unary_expr("-", sum).text == "-(a + b)");
  CHECK(unary_expr("-", neg).text == "-(-1)");
  CHECK(unary_expr("-", a).text == "-a");
  CHECK(receiver(unary_expr("-", a)) == "(-a)");
  CHECK_THROWS(binary_expr(a, "<>", b));
  CHECK(dotted_attr("self", "") == "self");
  CHECK(dotted_attr("self", "conv1") == "self.conv1");
  CHECK(dotted_attr("self", "layer1.0.conv1") == "getattr(self.layer1, \"0\").conv1");
  CHECK(dotted_attr("self", "blocks.class") == "getattr(self.blocks, \"class\")");
  CHECK(attr_path("torch.ops", {"aten", "add", "Tensor"}) == "torch.ops.aten.add.Tensor");
  CHECK(attr_path("m", {"self"}, [](const std::string& c) {
          return is_identifier(c) && c != "self";
        }) == "getattr(m, \"self\")");
  CHECK(assign_attr("self", "fc", "nn.Linear(2, 3)") == "self.fc = nn.Linear(2, 3)");
  CHECK(assign_attr("self.features", "0", "nn.ReLU()") ==
        "setattr(self.features, \"0\", nn.ReLU())");
  CHECK(parallel_assign({"a", "b"}, {"b", "a"}) == "a, b = b, a");
  CHECK(parallel_assign({"a", "b", "c"}, {"a", "x", "y"}) == "b, c = x, y");
  CHECK(parallel_assign({"a", "", "c"}, {"x", "y", "c"}) == "a = x");
  CHECK(parallel_assign({"a"}, {"a"}) == "");
  CHECK(parallel_assign({}, {}) == "");
}

TEST_CASE("pysrc: NameAllocator cleans hints") {
  NameAllocator names([](const std::string& s) { return s == "torch" || s == "self"; });
  CHECK(names.clean("conv1") == "conv1");
  CHECK(names.clean("layer1.0.conv1") == "layer1_0_conv1");
  CHECK(names.clean("aten::add") == "aten__add");
  CHECK(names.clean("_x_") == "x");
  CHECK(names.clean("") == "value");
  CHECK(names.clean("__") == "value");
  CHECK(names.clean("3") == "value_3");
  CHECK(names.clean("0.weight") == "value_0_weight");
  CHECK(names.clean("if") == "if_");
  CHECK(names.clean("torch") == "torch_");
  CHECK(names.clean("caf\xc3\xa9") == "caf");
  CHECK(names.reserved("None"));
  CHECK(names.reserved("self"));
  CHECK_FALSE(names.reserved("x"));
  CHECK(names.usable("x"));
  CHECK_FALSE(names.usable("torch"));
  CHECK_FALSE(names.usable("lambda"));
  CHECK_FALSE(names.usable("1x"));
}

TEST_CASE("pysrc: NameAllocator hands out each name once") {
  NameAllocator names;
  CHECK(names.unique("x") == "x");
  CHECK(names.unique("x") == "x_1");
  CHECK(names.unique("x") == "x_2");
  names.take("y");
  names.take("y_1");
  CHECK(names.taken("y_1"));
  CHECK(names.unique("y") == "y_2");
  // fresh() does not clean: the caller's text is used as it is.
  CHECK(names.fresh("a.b") == "a.b");
  CHECK(names.fresh("a.b") == "a.b_1");
  // A cleaned hint can meet a name taken under its own spelling.
  CHECK(names.unique("x.") == "x_3");
  std::set<std::string> seen;
  for (int i = 0; i < 200; ++i) {
    std::string n = names.unique(i % 2 ? "out" : "out_1");
    CHECK(is_identifier(n));
    CHECK(seen.insert(n).second);
  }
}
