// Writing a set of output files all-or-nothing.
//
// Note [Atomic outputs]
// Every output is first written under a hidden temporary name in the destination directory
// (".NAME.py.tmp-<pid>"); commit() renames them all into place. If anything fails before
// commit(), the destructor removes the temporaries (and the directory, if this run created it
// and it is empty), so a failed run leaves nothing behind and never touches existing outputs.
#pragma once

#include "support/diag.h"

#include <string>
#include <string_view>
#include <vector>

namespace tt {

class OutputSet {
 public:
  // Creates `dir` (and parents) if needed. Throws tt::Error(Usage) when a part of it exists and
  // is not a directory, tt::Error(System) when the system refuses (read-only, permissions).
  explicit OutputSet(std::string dir);
  ~OutputSet();
  OutputSet(const OutputSet&) = delete;
  OutputSet& operator=(const OutputSet&) = delete;

  // Reserves `filename` (no directory part) and returns the temporary path to write it to.
  std::string stage(const std::string& filename);
  void write_text(const std::string& filename, const std::string& text);
  // The file whose text is `parts` one after another (a large part is not copied to join them).
  void write_text(const std::string& filename, const std::vector<std::string_view>& parts);
  // Renames every staged file to its final name. Returns the final paths.
  std::vector<std::string> commit();
  std::string final_path(const std::string& filename) const;
  const std::string& dir() const { return dir_; }

 private:
  std::string dir_;
  std::vector<std::string> created_dirs_;
  std::vector<std::pair<std::string, std::string>> staged_;  // temp, final
  bool committed_ = false;
};

// Installs the handlers of Note [Outputs on a signal] now instead of on the first output. The CLI
// calls it first thing (Note [Signals while loading] in output_set.cpp).
void install_signal_handlers();

// The error for an output that the system would not let us write (Note [Exit code 6]): exit 6,
// "cannot write 'PATH' (<strerror(err)>) — <fix for that errno>". `err` 0 reads as EIO.
Error output_error(const std::string& path, int err);

// True when both paths name the same existing file (same device and inode).
bool same_file(const std::string& a, const std::string& b);

}  // namespace tt
