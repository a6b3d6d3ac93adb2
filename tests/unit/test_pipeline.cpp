// Pipeline text parser, PassManager (stats, fixpoint, --print-ir-after, --verify-each) and the
// CLI glue in driver/passes_cli.
#include "driver/passes_cli.h"
#include "loaders/tir_parser.h"
#include "passes/pass_manager.h"

#include <doctest/doctest.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <sstream>

using namespace tt;

namespace {

std::string usage_error(const std::string& text) {
  try {
    parse_pipeline(text);
  } catch (const Error& e) {
    CHECK(e.code() == ExitCode::Usage);
    return e.what();
  }
  FAIL("no error for '" << text << "'");
  return "";
}

const char* kDupGraph = R"(graph @g(%x : f32[2]) {
  %a : f32[2] = F.relu(%x)
  %b : f32[2] = F.relu(%x)
  %s : f32[2] = torch.mul(%a, %b)
  return %s
}
)";

}  // namespace

TEST_CASE("pipeline: parsing and canonical text") {
  CHECK(parse_pipeline("").empty());
  CHECK(parse_pipeline("  ").empty());
  CHECK(parse_pipeline("cse,dce").str() == "cse,dce");
  CHECK(parse_pipeline(" cse , dce ").str() == "cse,dce");
  CHECK(parse_pipeline("fold-constants{max-numel=16},dce").str() ==
        "fold-constants{max-numel=16},dce");
  auto p = parse_pipeline("fixpoint(cse,fixpoint{max-iterations=3}(dce)),fuse");
  CHECK(p.str() ==
        "fixpoint(cse,fixpoint{max-iterations=3}(dce)),eliminate-noops,fold-constants,fold-"
        "batchnorm,dce");
  REQUIRE(p.steps.size() == 5);
  CHECK(p.steps[0].kind == PipelineStep::Kind::Fixpoint);
  CHECK(p.steps[0].max_iterations == 10);
  CHECK(p.steps[0].children[1].max_iterations == 3);
  CHECK(p.pass_names() == std::vector<std::string>{"cse", "dce", "eliminate-noops",
                                                   "fold-constants", "fold-batchnorm"});
}

TEST_CASE("pipeline: errors name the column and the closest pass") {
  CHECK(usage_error("fold-batchnrom") ==
        "--passes: unknown pass 'fold-batchnrom' at column 1 — did you mean 'fold-batchnorm'?");
  CHECK(usage_error("cse,dce,fold-batchnrom") ==
        "--passes: unknown pass 'fold-batchnrom' at column 9 — did you mean 'fold-batchnorm'?");
  CHECK(usage_error("cse,fixpoint(dcee)") ==
        "--passes: unknown pass 'dcee' at column 14 — did you mean 'dce'?");
  CHECK(usage_error("fixpiont(cse)").find("did you mean 'fixpoint'?") != std::string::npos);
  CHECK(usage_error("quantize-everything").find("run 'tinytrace passes'") != std::string::npos);
  CHECK(usage_error("cse,,dce").find("at column 5") != std::string::npos);
  CHECK(usage_error("cse,").find("at column 5") != std::string::npos);
  CHECK(usage_error("cse)").find("unbalanced ')' at column 4") != std::string::npos);
  CHECK(usage_error("fixpoint(cse").find("expected ')' to close fixpoint( at column 1") !=
        std::string::npos);
  CHECK(usage_error("fixpoint()").find("empty fixpoint()") != std::string::npos);
  CHECK(usage_error("fixpoint cse").find("expected '(' after fixpoint") != std::string::npos);
  CHECK(usage_error("cse{a=1,a=2}").find("option 'a' given twice") != std::string::npos);
  CHECK(usage_error("cse{a}").find("expected '=' after option 'a' at column 6") !=
        std::string::npos);
  CHECK(usage_error("fixpoint{max-iterations=0}(cse)").find("not a positive integer") !=
        std::string::npos);
  CHECK(usage_error("fuse{x=1}").find("not to the pipeline 'fuse'") != std::string::npos);
  CHECK(usage_error("cse dce").find("unexpected 'd' at column 5") != std::string::npos);
  CHECK(edit_distance("kitten", "sitting") == 3);
  CHECK(closest_pass_name("cse") == "cse");
  CHECK(closest_pass_name("zzzzzzzzzz").empty());
}

TEST_CASE("pass manager: stats per pass run, rewrites, options") {
  auto g = parse_tir(kDupGraph);
  Diagnostics d;
  PassManager pm(parse_pipeline("cse,dce,fold-constants"));
  CHECK(pm.run(*g, d));
  const auto& st = pm.stats();
  REQUIRE(st.size() == 3);
  CHECK(st[0].name == "cse");
  CHECK(st[0].changed);
  CHECK(st[0].nodes_before == 3);
  CHECK(st[0].nodes_after == 2);
  CHECK(st[0].rewrites == 1);
  CHECK(st[0].milliseconds >= 0);
  CHECK(st[1].name == "dce");
  CHECK_FALSE(st[1].changed);
  CHECK(st[1].rewrites == 0);
  CHECK(st[2].nodes_after == 2);
  REQUIRE(pm.rewrite_log().size() == 1);
  CHECK(pm.rewrite_log()[0].pass == "cse");
  CHECK(pm.rewrite_log()[0].rule == "cse");
  CHECK(pm.rewrite_log()[0].node == "b");

  // An option a pass does not have is a usage error naming it.
  auto g2 = parse_tir(kDupGraph);
  PassManager bad(parse_pipeline("dce{depth=3}"));
  try {
    bad.run(*g2, d);
    FAIL("no error");
  } catch (const Error& e) {
    CHECK(e.code() == ExitCode::Usage);
    CHECK(std::string(e.what()).find("pass 'dce' has no option 'depth' (column 1)") !=
          std::string::npos);
  }
  PassManager bad_value(parse_pipeline("fold-constants{max-numel=lots}"));
  CHECK_THROWS_AS(bad_value.run(*g2, d), Error);
}

TEST_CASE("pass manager: fixpoint repeats until nothing changes, with a cap") {
  {
    auto g = parse_tir(kDupGraph);
    Diagnostics d;
    PassManager pm(parse_pipeline("fixpoint(cse,dce)"));
    CHECK(pm.run(*g, d));
    // Round 1: cse merges %b; round 2 changes nothing -> stop.
    REQUIRE(pm.stats().size() == 4);
    CHECK(pm.stats()[0].changed);
    CHECK_FALSE(pm.stats()[2].changed);
    CHECK_FALSE(pm.stats()[3].changed);
    CHECK(d.size() == 0);
  }
  {
    auto g = parse_tir(kDupGraph);
    Diagnostics d;
    PassManager pm(parse_pipeline("fixpoint{max-iterations=1}(cse,dce)"));
    pm.run(*g, d);
    CHECK(pm.stats().size() == 2);
    REQUIRE(d.size() == 1);
    CHECK(d.items()[0].code == "fixpoint-cap");
  }
}

TEST_CASE("pass manager: --print-ir-after and --verify-each") {
  auto g = parse_tir(kDupGraph);
  Diagnostics d;
  std::ostringstream ir;
  PassManagerOptions o;
  o.print_ir_after = "cse";
  o.ir_stream = &ir;
  o.verify_each = true;
  PassManager pm(parse_pipeline("cse,dce"), o);
  pm.run(*g, d);
  std::string text = ir.str();
  CHECK(text.rfind("// IR after cse\ngraph @g(%x : f32[2]) {\n", 0) == 0);
  CHECK(text.find("torch.mul(%a, %a)") != std::string::npos);
  CHECK(text.find("IR after dce") == std::string::npos);
  // What was printed parses back.
  CHECK_NOTHROW(parse_tir(text.substr(text.find('\n') + 1)));

  std::ostringstream all;
  o.print_ir_after = "all";
  o.ir_stream = &all;
  auto g2 = parse_tir(kDupGraph);
  PassManager pm2(parse_pipeline("cse,dce"), o);
  pm2.run(*g2, d);
  CHECK(all.str().find("// IR after cse") != std::string::npos);
  CHECK(all.str().find("// IR after dce") != std::string::npos);

  o.print_ir_after = "fold-batchnorm";
  CHECK_THROWS_AS(PassManager(parse_pipeline("cse"), o), Error);
  o.print_ir_after = "csee";
  try {
    PassManager(parse_pipeline("cse"), o);
    FAIL("no error");
  } catch (const Error& e) {
    CHECK(e.code() == ExitCode::Usage);
    CHECK(std::string(e.what()).find("did you mean 'cse'?") != std::string::npos);
  }

  // A broken graph is reported before the first pass (the input's fault, not a pass's).
  Graph broken;
  Value* x = broken.add_input(Type::tensor(), "x");
  Node* late = broken.create("F.relu", {x}, 1);
  Node* early = broken.insert("F.relu", {late->output()}, 1, nullptr);
  broken.block()->append(late);  // defined after its use
  broken.add_output(early->output());
  o.print_ir_after.clear();
  PassManager pm3(parse_pipeline("dce"), o);
  try {
    pm3.run(broken, d);
    FAIL("no error");
  } catch (const Error& e) {
    CHECK(e.code() == ExitCode::BadInput);
    CHECK(std::string(e.what()).find("not well-formed") != std::string::npos);
  }
}

TEST_CASE("passes_cli: pipeline text, list, opt") {
  PassCliOptions o;
  CHECK(pipeline_text(o).empty());
  o.fuse = true;
  CHECK(pipeline_text(o) == "fuse");
  o.passes = "cse";
  CHECK(pipeline_text(o) == "fuse,cse");
  {  // --dequantize runs first: --dequantize --quant-prep prepares the float twin.
    PassCliOptions d;
    d.dequantize = true;
    CHECK(pipeline_text(d) == "dequantize,dce");
    d.quant_prep = true;
    d.passes = "cse";
    CHECK(pipeline_text(d) == "dequantize,dce,quant-prep,cse");
  }
  // Columns count in the --passes text even after --fuse.
  o.passes = "cse,dcee";
  try {
    check_pass_options(o);
    FAIL("no error");
  } catch (const Error& e) {
    CHECK(std::string(e.what()).find("at column 5") != std::string::npos);
  }
  PassCliOptions p;
  p.print_ir_after = "all";
  CHECK_THROWS_AS(check_pass_options(p), Error);

  std::ostringstream list;
  print_pass_list(list);
  for (const auto& pass : all_passes()) CHECK(list.str().find(pass.name) != std::string::npos);
  CHECK(list.str().find("fuse") != std::string::npos);
  // Test-only passes are registered by the tests (main.cpp) but never listed.
  CHECK(find_pass("test-perturb-weight") != nullptr);
  CHECK(list.str().find("test-perturb-weight") == std::string::npos);

  std::string path = (std::filesystem::temp_directory_path() / "tt_test_pipeline_opt.tir").string();
  {
    std::ofstream f(path);
    f << kDupGraph << "// -----\n" << kDupGraph;
  }
  OptOptions opt;
  opt.file = path;
  opt.passes.passes = "cse,dce";
  std::ostringstream out;
  run_opt(opt, out);
  std::string s = out.str();
  CHECK(s.find("// -----\n") != std::string::npos);
  CHECK(s.find("F.relu(%x)\n  %s") != std::string::npos);
  std::remove(path.c_str());
  opt.file = path + ".missing";
  try {
    run_opt(opt, out);
    FAIL("no error");
  } catch (const Error& e) {
    CHECK(e.code() == ExitCode::BadInput);
  }
}
