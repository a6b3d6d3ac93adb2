// All-or-nothing output files; see Note [Atomic outputs].
#include "support/output_set.h"

#include "support/diag.h"

#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <fstream>

namespace tt {

bool same_file(const std::string& a, const std::string& b) {
  struct stat sa {}, sb {};
  if (::stat(a.c_str(), &sa) != 0 || ::stat(b.c_str(), &sb) != 0) return false;
  return sa.st_dev == sb.st_dev && sa.st_ino == sb.st_ino;
}

OutputSet::OutputSet(std::string dir) : dir_(dir.empty() ? "." : std::move(dir)) {
  // mkdir -p, remembering what we made so that a failed run can remove it again.
  std::string path;
  size_t pos = 0;
  while (pos != std::string::npos) {
    pos = dir_.find('/', pos + 1);
    path = dir_.substr(0, pos);
    if (path.empty()) continue;
    struct stat st {};
    if (::stat(path.c_str(), &st) == 0) {
      if (!S_ISDIR(st.st_mode))
        throw Error(ExitCode::Usage, "output directory '" + dir_ + "': '" + path +
                                         "' exists and is not a directory — choose another -o");
      continue;
    }
    if (::mkdir(path.c_str(), 0777) != 0)
      throw Error(ExitCode::Usage, "cannot create output directory '" + path + "' (" +
                                       std::strerror(errno) + ") — choose another -o");
    created_dirs_.push_back(path);
  }
  if (::access(dir_.c_str(), W_OK) != 0)
    throw Error(ExitCode::Usage, "output directory '" + dir_ + "' is not writable — choose another -o");
}

OutputSet::~OutputSet() {
  if (committed_) return;
  for (const auto& s : staged_) std::remove(s.first.c_str());
  for (auto it = created_dirs_.rbegin(); it != created_dirs_.rend(); ++it) ::rmdir(it->c_str());
}

std::string OutputSet::final_path(const std::string& filename) const {
  return dir_ + "/" + filename;
}

std::string OutputSet::stage(const std::string& filename) {
  std::string tmp = dir_ + "/." + filename + ".tmp-" + std::to_string(::getpid());
  staged_.emplace_back(tmp, final_path(filename));
  return tmp;
}

void OutputSet::write_text(const std::string& filename, const std::string& text) {
  std::string tmp = stage(filename);
  std::ofstream out(tmp, std::ios::binary);
  out << text;
  out.close();
  if (!out)
    throw Error(ExitCode::Usage, "cannot write '" + final_path(filename) + "' (" +
                                     std::strerror(errno) + ") — check free space and permissions");
}

std::vector<std::string> OutputSet::commit() {
  std::vector<std::string> done;
  for (const auto& s : staged_) {
    if (std::rename(s.first.c_str(), s.second.c_str()) != 0)
      throw Error(ExitCode::Usage, "cannot rename into '" + s.second + "' (" + std::strerror(errno) +
                                       ") — check permissions");
    done.push_back(s.second);
  }
  committed_ = true;
  return done;
}

}  // namespace tt
