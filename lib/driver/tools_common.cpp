// Shared helpers of the analysis commands (inspect, diff, profile); see tools_common.h.
#include "driver/tools_common.h"

#include "driver/passes_cli.h"

#include <algorithm>
#include <cstdio>
#include <ostream>

namespace tt {

using ojson = nlohmann::ordered_json;

void apply_input_shapes(Model& m, const std::vector<InputSpec>& specs) {
  Graph& g = *m.graph;
  size_t given = specs.size(), n = g.inputs().size(), required = g.num_required_inputs();
  if (given > n || given < required)
    throw Error(ExitCode::Usage, "the model has " + std::to_string(n) + " input(s) but " +
                                     std::to_string(given) +
                                     " --input-shape were given — give one per input, in order" +
                                     (required < n ? " (the first " + std::to_string(required) +
                                                         " have no default and are needed)"
                                                   : std::string()));
  for (size_t i = 0; i < given; ++i) {
    Value* in = g.inputs()[i];
    in->set_type(Type::tensor(specs[i].dtype, specs[i].shape));
    // A shape makes the input a tensor, which a default (None) is not: the code is then written
    // for a tensor there, and calls must pass one.
    if (const AttrValue* d = g.input_default(in); d && !default_fits(in->type(), *d)) {
      m.diags.warn("forward-default",
                   "input '" + in->name() + "' loses its default " + attr_str(*d) +
                       ": --input-shape makes it a tensor, and NAME.py is written for one");
      g.clear_input_default(in);
    }
  }
}

Model load_model_with_shapes(const std::string& path, const std::vector<InputSpec>& specs,
                             bool infer) {
  Model m = load_model(path);
  if (specs.empty()) return m;
  Graph& g = *m.graph;
  apply_input_shapes(m, specs);
  if (!infer) return m;
  PassCliOptions po;
  po.passes = "infer-shapes";
  run_pass_options(g, m.diags, po);
  return m;
}

static ojson str_or_null(const std::string& s) { return s.empty() ? ojson(nullptr) : ojson(s); }

ojson source_json(const SourceInfo& s) {
  return ojson{{"path", str_or_null(s.path)},
               {"format", str_or_null(s.format)},
               {"sha256", str_or_null(s.sha256)}};
}

ojson signature_json(const Value& v) {
  const Type& t = v.type();
  ojson shape = nullptr;
  if (t.is_tensor() && t.shape) {
    shape = ojson::array();
    for (int64_t d : *t.shape) shape.push_back(d < 0 ? ojson(nullptr) : ojson(d));
  }
  bool dtype_known = t.is_tensor() && t.dtype != DType::Unknown;
  return ojson{{"name", v.name()},
               {"type", t.str()},
               {"dtype", dtype_known ? ojson(dtype_name(t.dtype)) : ojson(nullptr)},
               {"shape", shape}};
}

ojson diagnostics_json(const Diagnostics& d) {
  ojson a = ojson::array();
  for (const Diagnostic& x : d.items()) {
    const char* sev = x.severity == Severity::Note    ? "note"
                      : x.severity == Severity::Error ? "error"
                                                      : "warning";
    a.push_back(ojson{{"severity", sev},
                      {"code", x.code},
                      {"message", x.message},
                      {"node", str_or_null(x.node)},
                      {"scope", str_or_null(x.scope)},
                      {"loc", str_or_null(x.loc)}});
  }
  return a;
}

std::string group_digits(int64_t n) {
  std::string s = std::to_string(n < 0 ? -n : n), out;
  for (size_t i = 0; i < s.size(); ++i) {
    if (i && (s.size() - i) % 3 == 0) out += ',';
    out += s[i];
  }
  return n < 0 ? "-" + out : out;
}

std::string human_bytes(int64_t n) {
  const char* units[] = {"B", "KiB", "MiB", "GiB"};
  double v = static_cast<double>(n);
  int u = 0;
  while (v >= 1024 && u < 3) {
    v /= 1024;
    ++u;
  }
  return u == 0 ? std::to_string(n) + " B" : fixed(v, 1) + " " + units[u];
}

std::string fixed(double v, int decimals) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.*f", decimals, v);
  return buf;
}

std::string tensor_type_str(const at::Tensor& t) {
  if (!t.defined()) return "?";
  return Type::tensor(dtype_from_scalar_type(static_cast<int64_t>(t.scalar_type())),
                      t.sizes().vec())
      .str();
}

// Display width of UTF-8 text: code points, not bytes (the tables use "→" and "Δ").
static size_t display_width(const std::string& s) {
  size_t w = 0;
  for (unsigned char c : s)
    if ((c & 0xC0) != 0x80) ++w;
  return w;
}

TextTable::TextTable(std::vector<std::string> header, std::vector<bool> numeric)
    : header_(std::move(header)), numeric_(std::move(numeric)) {
  numeric_.resize(header_.size(), false);
}

void TextTable::add(std::vector<std::string> row) {
  row.resize(header_.size());
  rows_.push_back(std::move(row));
}

void TextTable::print(std::ostream& os, int indent) const {
  std::vector<size_t> width(header_.size(), 0);
  auto measure = [&](const std::vector<std::string>& r) {
    for (size_t i = 0; i < r.size(); ++i) width[i] = std::max(width[i], display_width(r[i]));
  };
  measure(header_);
  for (const auto& r : rows_) measure(r);
  auto line = [&](const std::vector<std::string>& r) {
    std::string out(static_cast<size_t>(indent), ' ');
    for (size_t i = 0; i < r.size(); ++i) {
      std::string pad(width[i] - display_width(r[i]), ' ');
      bool last = i + 1 == r.size();
      if (numeric_[i])
        out += pad + r[i];
      else
        out += r[i] + (last ? "" : pad);
      if (!last) out += "  ";
    }
    while (!out.empty() && out.back() == ' ') out.pop_back();
    os << out << "\n";
  };
  line(header_);
  for (const auto& r : rows_) line(r);
}

std::string qparams_text(const nlohmann::ordered_json& q) {
  auto num = [](double v) {
    char buf[32];
    std::snprintf(buf, sizeof buf, "%.6g", v);
    return std::string(buf);
  };
  std::string s = q["dtype"].get<std::string>() + " " + q["scheme"].get<std::string>();
  if (q.contains("scale"))
    return s + " scale " + num(q["scale"].get<double>()) + " zp " +
           std::to_string(q["zero_point"].get<int64_t>());
  const auto scales = q["scales"].get<std::vector<double>>();
  const auto zps = q["zero_points"].get<std::vector<int64_t>>();
  s += " axis " + std::to_string(q["axis"].get<int64_t>()) + ": " + std::to_string(scales.size()) +
       " scales";
  if (!scales.empty()) {
    auto [lo, hi] = std::minmax_element(scales.begin(), scales.end());
    s += " " + num(*lo) + (*lo == *hi ? "" : ".." + num(*hi));
  }
  if (!zps.empty()) {
    auto [lo, hi] = std::minmax_element(zps.begin(), zps.end());
    s += ", zero points " + std::to_string(*lo) + (*lo == *hi ? "" : ".." + std::to_string(*hi));
  }
  return s;
}

}  // namespace tt
