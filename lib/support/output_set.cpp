// All-or-nothing output files; see Note [Atomic outputs].
#include "support/output_set.h"

#include "support/diag.h"

#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>

namespace tt {
namespace {

// Note [Outputs on a signal]
// Ctrl-C or a kill during a conversion must not leave hidden temporaries (or a directory this run
// made) behind. The paths are kept in a fixed table of C strings that a signal handler can walk
// with async-signal-safe calls only (unlink, rmdir), after which the signal is raised again with
// its default action, so the exit status still says what killed the process.
constexpr int kMaxTracked = 256;
volatile std::sig_atomic_t g_tracking = 0;
char* g_files[kMaxTracked];
char* g_dirs[kMaxTracked];

void on_fatal_signal(int sig) {
  for (int i = 0; i < kMaxTracked; ++i)
    if (char* f = g_files[i]) ::unlink(f);
  for (int i = kMaxTracked; i-- > 0;)
    if (char* d = g_dirs[i]) ::rmdir(d);
  std::signal(sig, SIG_DFL);
  std::raise(sig);
}

// Note [File size limit]
// Past `ulimit -f` (RLIMIT_FSIZE) the kernel sends SIGXFSZ, whose default action kills the
// process with the temporaries still in place. Ignored, the write fails with EFBIG instead and
// the run ends like any full disk: exit 6, nothing left behind.
void install_handlers_once() {
  if (g_tracking) return;
  g_tracking = 1;
  for (int sig : {SIGINT, SIGTERM, SIGHUP})
    if (std::signal(sig, on_fatal_signal) == SIG_IGN) std::signal(sig, SIG_IGN);  // keep nohup's
  std::signal(SIGXFSZ, SIG_IGN);
}

}  // namespace

// Note [Signals while loading]
// LibTorch loads UCX (through its MPI backend), whose constructor catches SIGHUP to enter its own
// debug mode: before tinytrace installs anything, a SIGHUP while a model loads is swallowed and the
// run goes on to write its outputs. The CLI therefore installs the handlers before it reads a model;
// they replace any handler a library put there and leave a signal that is ignored at that point
// ignored. UCX replaces an ignored SIGHUP too (nohup's), before main can see it: under nohup a
// SIGHUP now ends the run cleanly (nothing left behind) instead of being swallowed; `setsid`
// detaches a run from the terminal without that.
void install_signal_handlers() { install_handlers_once(); }

namespace {

void track(char** table, const std::string& path) {
  for (int i = 0; i < kMaxTracked; ++i)
    if (!table[i]) {
      table[i] = ::strdup(path.c_str());
      return;
    }
}

void untrack(char** table, const std::string& path) {
  for (int i = 0; i < kMaxTracked; ++i)
    if (table[i] && path == table[i]) {
      char* p = table[i];
      table[i] = nullptr;
      std::free(p);
      return;
    }
}

}  // namespace

Error output_error(const std::string& path_or_temp, int err) {
  if (err == 0) err = EIO;
  // A staged temporary (".NAME.pt.tmp-<pid>", see stage()) is named as the output it stands for.
  std::string path = path_or_temp;
  size_t slash = path.rfind('/'), tmp = path.rfind(".tmp-");
  size_t base = slash == std::string::npos ? 0 : slash + 1;
  if (tmp != std::string::npos && tmp > base && path[base] == '.')
    path = path.substr(0, base) + path.substr(base + 1, tmp - base - 1);
  std::string fix = "check the output directory, or choose another -o";
  if (err == ENOSPC || err == EFBIG || err == EDQUOT)
    fix = "free disk space (or raise the file size limit), or choose another -o";
  else if (err == EROFS || err == EACCES || err == EPERM)
    fix = "make the output directory writable, or choose another -o";
  else if (err == ENOENT)
    fix = "the output directory was removed while tinytrace ran; run it again";
  else if (err == ENOMEM)
    fix = "free memory, or convert on a machine with more";
  return Error(ExitCode::System,
               "cannot write '" + path + "' (" + std::strerror(err) + ") — " + fix);
}

bool same_file(const std::string& a, const std::string& b) {
  struct stat sa {
  }, sb{};
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
    if (::mkdir(path.c_str(), 0777) != 0) {
      int err = errno;
      throw Error(ExitCode::System, "cannot create output directory '" + path + "' (" +
                                        std::strerror(err) + ") — choose another -o");
    }
    created_dirs_.push_back(path);
    install_handlers_once();
    track(g_dirs, path);
  }
  if (::access(dir_.c_str(), W_OK) != 0)
    throw Error(ExitCode::System, "output directory '" + dir_ + "' is not writable (" +
                                      std::strerror(errno) +
                                      ") — make it writable, or choose another -o");
}

OutputSet::~OutputSet() {
  for (const auto& s : staged_) untrack(g_files, s.first);
  for (const auto& d : created_dirs_) untrack(g_dirs, d);
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
  install_handlers_once();
  track(g_files, tmp);
  return tmp;
}

void OutputSet::write_text(const std::string& filename, const std::string& text) {
  write_text(filename, std::vector<std::string_view>{text});
}

void OutputSet::write_text(const std::string& filename,
                           const std::vector<std::string_view>& parts) {
  std::string tmp = stage(filename);
  errno = 0;
  std::ofstream out(tmp, std::ios::binary);
  for (std::string_view p : parts) out.write(p.data(), static_cast<std::streamsize>(p.size()));
  out.close();
  if (!out) throw output_error(final_path(filename), errno);
}

std::vector<std::string> OutputSet::commit() {
  std::vector<std::string> done;
  for (const auto& s : staged_) {
    if (std::rename(s.first.c_str(), s.second.c_str()) != 0) {
      int err = errno;
      // All or nothing: the outputs renamed so far go too (the destructor removes the rest).
      for (const auto& d : done) std::remove(d.c_str());
      throw output_error(s.second, err);
    }
    done.push_back(s.second);
  }
  committed_ = true;
  for (const auto& s : staged_) untrack(g_files, s.first);
  for (const auto& d : created_dirs_) untrack(g_dirs, d);
  return done;
}

}  // namespace tt
