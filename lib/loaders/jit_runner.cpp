// Running the original TorchScript model through torch::jit (JIT headers stay in lib/loaders/).
#include "loaders/jit_runner.h"

#include "exec/seeded_rng.h"

#include "loaders/export.h"
#include "loaders/loader.h"
#include "loaders/torchscript/mapped_load.h"
#include "support/diag.h"

#include <torch/csrc/jit/api/function_impl.h>
#include <torch/csrc/jit/runtime/print_handler.h>
#include <torch/script.h>

#include <unordered_set>

#include <chrono>

namespace tt {

namespace {

torch::jit::Module load_for_running(const std::string& path) {
  // A torch.export archive runs as the module its loader builds (lib/loaders/export/).
  if (detect_format(path) == "export") return export_to_module(path);
  try {
    // Weights mapped from the file, not copied (Note [Weights mapped from the archive]).
    torch::jit::Module m = ts::load_mapped(path);
    m.eval();
    return m;
  } catch (const std::exception& e) {
    throw Error(ExitCode::BadInput, "cannot load the TorchScript model to run it — re-export it");
  }
}

}  // namespace

std::unordered_map<std::string, at::Tensor> record_torchscript_values(
    const std::string& path, const std::vector<c10::IValue>& inputs,
    const std::vector<std::string>& names) {
  torch::jit::Module m = load_for_running(path);
  // The module's own graph (a private load), not a copy: a copy renumbers the values that have
  // no name of their own, and the names must be the ones the loader saw.
  std::shared_ptr<torch::jit::Graph> g = m.get_method("forward").graph();
  std::unordered_set<std::string> wanted(names.begin(), names.end());
  std::vector<std::string> recorded;
  std::vector<torch::jit::Value*> copies;
  for (torch::jit::Node* n : g->block()->nodes()) {
    for (torch::jit::Value* o : n->outputs()) {
      if (!o->type()->cast<c10::TensorType>() || !wanted.count(o->debugName())) continue;
      // A copy right after the node: what the value holds before any later in-place write.
      torch::jit::WithInsertPoint at(n->next());
      torch::jit::Value* none = g->insertConstant(c10::IValue());
      torch::jit::Node* c = g->create(c10::Symbol::fromQualString("aten::clone"), {o, none});
      g->insertNode(c);
      c->output()->setType(o->type());
      copies.push_back(c->output());
      recorded.push_back(o->debugName());
    }
  }
  // A function returns one value: the copies as a tuple, instead of the model's result.
  {
    torch::jit::WithInsertPoint at(g->return_node());
    torch::jit::Node* t = g->insertNode(g->createTuple(copies));
    while (!g->outputs().empty()) g->eraseOutput(0);
    g->registerOutput(t->output());
  }
  torch::jit::GraphFunction fn("tinytrace_record", g->copy(), nullptr);
  torch::jit::Stack stack;
  stack.push_back(m._ivalue());
  for (const auto& v : inputs) stack.push_back(v);
  c10::InferenceMode guard;
  SeededGlobalRng rng;  // Note [Random draws under --verify] in exec/seeded_rng.h
  fn.run(stack);
  std::unordered_map<std::string, at::Tensor> out;
  if (stack.empty() || !stack[0].isTuple()) return out;
  const auto& items = stack[0].toTupleRef().elements();
  for (size_t i = 0; i < recorded.size() && i < items.size(); ++i)
    if (items[i].isTensor()) out[recorded[i]] = items[i].toTensor();
  return out;
}

c10::IValue run_torchscript_file(const std::string& path, const std::vector<c10::IValue>& inputs,
                                 int repeat, const std::function<void(double)>& on_run) {
  torch::jit::Module m = load_for_running(path);
  c10::InferenceMode guard;
  // The model's own print(...) goes to the JIT's print handler, stdout by default; stdout is the
  // CLI's (scripts read it), so while the original runs its prints are dropped, as the
  // interpreter drops prim.Print.
  struct QuietPrints {
    torch::jit::PrintHandler old = torch::jit::getPrintHandler();
    QuietPrints() {
      torch::jit::setPrintHandler([](const std::string&) {});
    }
    ~QuietPrints() { torch::jit::setPrintHandler(old); }
  } quiet;
  c10::IValue out;
  for (int i = 0; i < std::max(repeat, 1); ++i) {
    auto t0 = std::chrono::steady_clock::now();
    // A failing op inside a scripted/traced forward surfaces as torch::jit::JITException (a
    // std::runtime_error whose first line is only "The following operation failed..."), an
    // ATen check as c10::Error: both mean the inputs do not fit.
    auto bad_inputs = [](std::string msg) {
      auto nl = msg.find('\n');
      if (nl != std::string::npos) msg = msg.substr(0, nl);
      return Error(ExitCode::Usage, "the original model failed on the example inputs (" + msg +
                                        ") — check --input-shape (one per input, in order)");
    };
    try {
      SeededGlobalRng rng;  // Note [Random draws under --verify] in exec/seeded_rng.h
      out = m.forward(inputs);
    } catch (const c10::Error& e) {
      throw bad_inputs(e.what_without_backtrace());
    } catch (const std::exception& e) {
      // The JIT's message starts with its own header; the ATen error is the last line.
      std::string msg = e.what();
      while (!msg.empty() && msg.back() == '\n') msg.pop_back();
      auto last = msg.rfind('\n');
      throw bad_inputs(last == std::string::npos ? msg : msg.substr(last + 1));
    }
    auto t1 = std::chrono::steady_clock::now();
    if (on_run) on_run(std::chrono::duration<double, std::milli>(t1 - t0).count());
  }
  return out;
}

}  // namespace tt
