// The streaming JSON writer (lib/support/json_writer.h) writes exactly what nlohmann's dump(2)
// writes for the same document: layout, integers, doubles (Grisu2 shortest digits, exponents,
// -0.0, non-finite as null), string escapes and UTF-8. Each case builds the document both ways.
#include "support/json_writer.h"

#include <doctest/doctest.h>

#include <cmath>
#include <cstring>
#include <cstdint>
#include <limits>
#include <random>
#include <string>
#include <vector>

using tt::JsonWriter;
using ojson = nlohmann::ordered_json;

namespace {

// The writer's text of `j` walked through JsonWriter::value (keys in the document's order).
template <class J>
std::string written(const J& j) {
  std::string out;
  JsonWriter(out).value(j);
  return out;
}

}  // namespace

TEST_CASE("json writer: scalars and strings match dump(2)") {
  const double inf = std::numeric_limits<double>::infinity();
  const double nan = std::numeric_limits<double>::quiet_NaN();
  ojson doubles = ojson::array();
  for (double d : {0.0,
                   -0.0,
                   1.0,
                   -1.0,
                   0.1,
                   0.2,
                   0.3,
                   1e-7,
                   1e-4,
                   1e-5,
                   1e15,
                   1e16,
                   1e17,
                   1e21,
                   1e22,
                   1e300,
                   -1e300,
                   1.5e-300,
                   5e-324,
                   2.2250738585072014e-308,
                   1.7976931348623157e308,
                   123456789012345678.0,
                   3.141592653589793,
                   2.0 / 3.0,
                   100.0,
                   0.5,
                   1e-3,
                   65504.0,
                   1.1920928955078125e-07,
                   inf,
                   -inf,
                   nan})
    doubles.push_back(d);
  ojson ints = ojson::array();
  for (int64_t i : {int64_t(0), int64_t(-1), int64_t(7), int64_t(-9), int64_t(1) << 53,
                    std::numeric_limits<int64_t>::max(), std::numeric_limits<int64_t>::max() - 1,
                    std::numeric_limits<int64_t>::min(), std::numeric_limits<int64_t>::min() + 1})
    ints.push_back(i);
  ints.push_back(std::numeric_limits<uint64_t>::max());
  ints.push_back(uint64_t(1) << 63);
  ojson strings = ojson::array();
  for (std::string s :
       {std::string(""), std::string("plain"), std::string("q\"uo\\te/"), std::string("\b\f\n\r\t"),
        std::string("a\0b", 3), std::string("\x01\x1f\x7f"), std::string("\x1b[0m"),
        std::string("caf\xc3\xa9"), std::string("\xe2\x86\x92 x\n"),
        std::string("\xf0\x9f\x99\x82\"")})
    strings.push_back(s);
  ojson doc = {{"doubles", doubles},
               {"ints", ints},
               {"strings", strings},
               {"bools", {true, false}},
               {"null", nullptr},
               {"empty_array", ojson::array()},
               {"empty_object", ojson::object()},
               {"nested", {{"a", {ojson::array(), ojson::object(), {{"k\n\"", {1, 2}}}}}}},
               {"", "empty key"}};
  CHECK(written(doc) == doc.dump(2));
  for (const auto& x : doc["doubles"]) CHECK(written(x) == x.dump(2));
  CHECK(written(ojson(-0.0)) == "-0.0");
  CHECK(written(ojson(1e-7)) == "1e-07");
  CHECK(written(ojson(1e300)) == "1e+300");
  CHECK(written(ojson(nan)) == "null");

  // An unordered json keeps its own (sorted) key order, as dump(2) does.
  nlohmann::json sorted = {{"zeta", 1}, {"alpha", {{"y", 0.1}, {"b", "x"}}}, {"mid", {}}};
  CHECK(written(sorted) == sorted.dump(2));
  // A top-level scalar and an empty document.
  CHECK(written(ojson("x\ty")) == ojson("x\ty").dump(2));
  CHECK(written(ojson::array()) == "[]");
  CHECK(written(ojson::object()) == "{}");
}

TEST_CASE("json writer: random doubles and integers match dump(2)") {
  std::mt19937_64 rng(22);
  ojson doc = ojson::array();
  for (int i = 0; i < 20000; ++i) {
    uint64_t bits = rng();
    double d;
    static_assert(sizeof d == sizeof bits);
    std::memcpy(&d, &bits, sizeof d);  // every exponent, NaN/inf payloads included
    doc.push_back(d);
    doc.push_back(std::ldexp(static_cast<double>(rng() % 2000001) - 1e6, int(rng() % 80) - 40));
    doc.push_back(static_cast<float>(static_cast<double>(rng() % 100000) / 997.0));
    doc.push_back(static_cast<int64_t>(rng()));
  }
  CHECK(written(doc) == doc.dump(2));
}

TEST_CASE("json writer: the streaming calls give dump(2)'s layout") {
  std::string out;
  JsonWriter w(out);
  w.begin_object().member("name", "n\"1").key("shape").begin_array().integer(3).null();
  w.end_array().key("empty").begin_array().end_array().key("obj").begin_object().end_object();
  w.member("list", std::vector<std::string>{"a", "b"}).member("x", 0.1).member("t", true);
  w.member("u", uint64_t(18446744073709551615ull)).member("n", nullptr);
  w.key("maybe").string_or_null("").key("deep").begin_array().begin_object();
  w.member("k", int64_t(-5)).end_object().begin_array().end_array().end_array().end_object();
  ojson expected = {{"name", "n\"1"},
                    {"shape", {3, nullptr}},
                    {"empty", ojson::array()},
                    {"obj", ojson::object()},
                    {"list", {"a", "b"}},
                    {"x", 0.1},
                    {"t", true},
                    {"u", uint64_t(18446744073709551615ull)},
                    {"n", nullptr},
                    {"maybe", nullptr},
                    {"deep", {{{"k", -5}}, ojson::array()}}};
  CHECK(out == expected.dump(2));
}

// Note [One record per line]: an Inline container is one line; an Indented one inside it puts
// its members on lines of their own again, one step deeper than the line it started on.
TEST_CASE("json writer: inline containers are one line, indented ones inside them break") {
  std::string out;
  JsonWriter w(out);
  w.begin_object().key("nodes").begin_array();
  w.begin_object(JsonWriter::Inline).member("name", "a").key("inputs").begin_array();
  w.end_array().key("attrs").begin_object().member("k", int64_t(1)).end_object();
  w.member("dims", std::vector<int64_t>{2, 3}).end_object();
  w.begin_object(JsonWriter::Inline).member("name", "if").key("blocks");
  w.begin_array(JsonWriter::Indented).begin_object(JsonWriter::Inline).key("nodes");
  w.begin_array(JsonWriter::Indented).begin_object(JsonWriter::Inline).member("name", "b");
  w.end_object().end_array().member("outputs", std::vector<std::string>{"b"}).end_object();
  w.begin_object(JsonWriter::Inline).key("nodes").begin_array(JsonWriter::Indented).end_array();
  w.end_object().end_array().end_object().end_array().member("after", true).end_object();
  const char* expected = R"({
  "nodes": [
    {"name": "a", "inputs": [], "attrs": {"k": 1}, "dims": [2, 3]},
    {"name": "if", "blocks": [
      {"nodes": [
        {"name": "b"}
      ], "outputs": ["b"]},
      {"nodes": []}
    ]}
  ],
  "after": true
})";
  CHECK(out == expected);
  // The same document as dump(2) writes it, parsed.
  CHECK(ojson::parse(out) ==
        ojson::parse(R"({"nodes": [{"name": "a", "inputs": [], "attrs": {"k": 1}, "dims": [2, 3]},
            {"name": "if", "blocks": [{"nodes": [{"name": "b"}], "outputs": ["b"]},
            {"nodes": []}]}], "after": true})"));
}

// A value written apart at depth 1 and placed with raw() is the text written in place.
TEST_CASE("json writer: a value written apart and placed with raw() reads as written in place") {
  ojson inner = {{"a", {1, 2}}, {"b", ojson::object()}, {"c", {{"d", "e"}}}};
  std::string part;
  JsonWriter(part, 1).value(inner);
  std::string placed, direct;
  JsonWriter(placed).begin_object().member("x", 1.5).key("inner").raw(part).end_object();
  JsonWriter(direct).begin_object().member("x", 1.5).member("inner", inner).end_object();
  CHECK(placed == direct);
  CHECK(placed == ojson{{"x", 1.5}, {"inner", inner}}.dump(2));
}

TEST_CASE("json writer: invalid UTF-8 throws as dump() does") {
  std::string bad("ok\xff", 3);
  std::string out;
  CHECK_THROWS_AS(JsonWriter(out).string(bad), nlohmann::json::type_error);
  CHECK_THROWS_AS(ojson(bad).dump(2), nlohmann::json::type_error);
}
