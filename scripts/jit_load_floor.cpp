// Benchmark floor: loads a TorchScript archive with torch::jit::load and exits.
// scripts/bench_convert.sh compares `tinytrace convert` against this on the same file.
#include <torch/script.h>

#include <iostream>

int main(int argc, char** argv) {
  if (argc != 2) {
    std::cerr << "usage: jit_load_floor MODEL.pt\n";
    return 2;
  }
  try {
    auto m = torch::jit::load(argv[1]);
    std::cout << m.get_method("forward").graph()->nodes().end()->kind().toQualString() << "\n";
  } catch (const std::exception& e) {
    std::cerr << "error: " << argv[1] << ": cannot load\n";
    return 3;
  }
  return 0;
}
