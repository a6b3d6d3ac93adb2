// Fuzz target: the .tir parser (lib/loaders/tir_parser.cpp). A graph that parses is also
// printed, verified and parsed again (DESIGN.md §4: printing then parsing gives the same text), so
// the printer and verifier see every graph the parser accepts. Note [Fuzz oracle].
#include "fuzz_target.h"
#include "ir/printer.h"
#include "ir/verifier.h"
#include "loaders/tir_parser.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string text(reinterpret_cast<const char*>(data), size);
  tt::fuzz::guarded([&] {
    auto g = tt::parse_tir(text, "fuzz.tir");
    tt::verify_graph(*g);
    std::string printed = tt::print_graph(*g);
    auto again = tt::parse_tir(printed, "printed.tir");
    if (tt::print_graph(*again) != printed)
      tt::fuzz::finding("print(parse(print(g))) != print(g):\n" + printed);
  });
  return 0;
}
