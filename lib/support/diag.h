// Diagnostics: warnings collected for the report, and fatal errors with an exit code.
//
// Note [Errors in tinytrace]
// Library code reports a fatal problem by throwing tt::Error with one of the exit codes of
// DESIGN.md §1 and a one-line message that says what is wrong and how to fix it. Exceptions
// from LibTorch/protobuf are caught at the loader boundary and turned into tt::Error; they
// never reach the user as a stack trace. Internal invariants use TT_ASSERT (exit code 1).
// Non-fatal findings (an op that fell back to torch.ops.aten, ...) are Diagnostics.
//
// Note [Exit code 6]
// DESIGN.md §1 gives 2 to a bad command line. A full disk, an output directory that is read-only
// or was removed while tinytrace ran, or a machine out of memory is none of 2-5 and not a bug (1):
// the same command succeeds once the system is fixed. Those exit 6 (ExitCode::System), one line
// naming the file and the system's reason (strerror), and a failed run still leaves nothing
// behind (Note [Atomic outputs]). An -o that names an existing non-directory stays a usage error.
//
// Note [Located errors]
// A fatal error about one place in the model carries that place as a Location (node, module
// scope, source line), the same three fields a Diagnostic has: the thrower attaches it with
// `throw Error(...).at(location_of(node))` (lib/ir/ir.h), and the CLI prints what the one-line
// message does not already say as a "note: at ..." line. A failed run writes no report (DESIGN.md
// §1), but where an error is survived and becomes a warning (infer-shapes stopping early), the
// warning in the report carries the error's place; a caller of the library reads where().
#pragma once

#include <stdexcept>
#include <string>
#include <vector>

namespace tt {

enum class ExitCode : int {
  Ok = 0,
  Internal = 1,      // a bug in tinytrace
  Usage = 2,         // bad command line
  BadInput = 3,      // the input cannot be read or is not a model
  Unsupported = 4,   // the model uses something tinytrace cannot convert
  VerifyFailed = 5,  // --verify found outputs beyond tolerance
  System = 6,        // the system failed the run: out of memory, an output that cannot be written
                     // (full disk, read-only or removed directory); Note [Exit code 6]
};

// Where in the model something is. Any part may be empty.
struct Location {
  std::string node;   // value name of the node's first output, without '%'
  std::string scope;  // module scope ("layer1.0")
  std::string loc;    // source location "file.py:12" (scripted models, torch.export)
  bool empty() const { return node.empty() && scope.empty() && loc.empty(); }
};

// "node %y in module 'layer1.0' at model.py:12", leaving out the parts that are empty.
std::string describe(const Location& where);

// How a source file is named in locations ("file.py:12"): its path below the Python package
// directory it was imported from (".../dist-packages/torch/nn/functional.py" ->
// "torch/nn/functional.py"; site-packages too), else its file name ("/home/me/model.py" ->
// "model.py").
std::string source_file_label(const std::string& path);

// The first line of a message that has text, without trailing blanks: LibTorch's messages span
// lines and may start with an empty one ("\nUnknown builtin op: torchvision::nms.\n...").
std::string first_line(const std::string& s);

class Error : public std::runtime_error {
 public:
  // message: "<what> — <how to fix>" (no "error:" prefix, no file name: the CLI adds them).
  Error(ExitCode code, std::string message, std::vector<std::string> notes = {})
      : std::runtime_error(message), code_(code), notes_(std::move(notes)) {}
  ExitCode code() const { return code_; }
  const std::vector<std::string>& notes() const { return notes_; }
  // Where in the model the error is (Note [Located errors]); empty when it is not about a place.
  const Location& where() const { return where_; }
  Error& at(Location where) {
    where_ = std::move(where);
    return *this;
  }

 private:
  ExitCode code_;
  std::vector<std::string> notes_;
  Location where_;
};

enum class Severity { Note, Warning, Error };

struct Diagnostic {
  Severity severity = Severity::Warning;
  std::string code;     // short stable identifier, e.g. "aten-fallback"
  std::string message;  // one line
  std::string node;     // value name of the node's first output, if any
  std::string scope;    // module scope
  std::string loc;      // source location "file.py:12"

  Location where() const { return {node, scope, loc}; }
};

class Diagnostics {
 public:
  void add(Diagnostic d) { items_.push_back(std::move(d)); }
  void warn(std::string code, std::string message, std::string node = "", std::string scope = "",
            std::string loc = "") {
    items_.push_back({Severity::Warning, std::move(code), std::move(message), std::move(node),
                      std::move(scope), std::move(loc)});
  }
  const std::vector<Diagnostic>& items() const { return items_; }
  size_t size() const { return items_.size(); }

 private:
  std::vector<Diagnostic> items_;
};

[[noreturn]] void assert_fail(const char* expr, const char* file, int line, const std::string& msg);

}  // namespace tt

#define TT_ASSERT(cond, ...)                                                             \
  do {                                                                                   \
    if (!(cond)) ::tt::assert_fail(#cond, __FILE__, __LINE__, std::string(__VA_ARGS__)); \
  } while (0)
