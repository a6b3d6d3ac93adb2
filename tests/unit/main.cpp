// The doctest runner for every unit test file in tests/unit/.
// The test-only passes (passes/pass.h) are registered before any test runs.
#define DOCTEST_CONFIG_IMPLEMENT
#include <doctest/doctest.h>

#include "loaders/jit_builtins.h"
#include "passes/pass.h"
#include "source_dir.h"

const char* tt_test_source_dir() { return TT_SOURCE_DIR_PATH; }

int main(int argc, char** argv) {
  tt::register_test_passes();
  tt::install_jit_builtins();
  return doctest::Context(argc, argv).run();
}
