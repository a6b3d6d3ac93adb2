// What every fuzz target shares (tests/fuzz.cmake, README "Reliability").
//
// Note [Fuzz oracle]
// A fuzz target feeds one input to one entry point of tinytrace and says what counts as a bug:
// anything the CLI would not turn into its one-line error with exit 2-4 — a crash or a sanitizer
// report, an exception that is not tt::Error (the CLI would call it an internal error, exit 1),
// or tt::Error with ExitCode::Internal (a failed TT_ASSERT). Those abort(), so libFuzzer (or the
// plain driver, fuzz_main.cpp) keeps the input as a crash; a tt::Error of any other code is the
// contract kept and the run goes on. Running out of memory is not a finding: the CLI's exit 6.
#pragma once

#include "support/diag.h"

#include <unistd.h>

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <exception>
#include <new>
#include <string>

namespace tt::fuzz {

[[noreturn]] inline void finding(const std::string& what) {
  std::fprintf(stderr, "fuzz finding: %s\n", what.c_str());
  std::abort();
}

// Runs body(); aborts on what Note [Fuzz oracle] calls a bug.
template <typename Body>
void guarded(Body&& body) {
  try {
    body();
  } catch (const Error& e) {
    if (e.code() == ExitCode::Internal) finding(std::string("internal error: ") + e.what());
  } catch (const std::bad_alloc&) {
  } catch (const std::exception& e) {
    finding(std::string("exception that is not tt::Error: ") + e.what());
  } catch (...) {
    finding("unknown exception");
  }
}

// The loaders read files: the input as a file of its own, removed again by the destructor.
class TempFile {
 public:
  TempFile(const uint8_t* data, size_t size, const char* suffix) {
    const char* dir = std::getenv("TMPDIR");
    path_ =
        std::string(dir && *dir ? dir : "/tmp") + "/tt-fuzz-" + std::to_string(::getpid()) + suffix;
    std::FILE* f = std::fopen(path_.c_str(), "wb");
    if (!f) finding("cannot write the temporary input " + path_);
    if (size && std::fwrite(data, 1, size, f) != size) finding("short write to " + path_);
    std::fclose(f);
  }
  ~TempFile() { std::remove(path_.c_str()); }
  TempFile(const TempFile&) = delete;
  TempFile& operator=(const TempFile&) = delete;
  const std::string& path() const { return path_; }

 private:
  std::string path_;
};

}  // namespace tt::fuzz
