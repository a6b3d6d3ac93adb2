// One warm Python for the unit tests' Python checks (Note [One Python, a fork per check]).
#pragma once

#include <sys/types.h>
#include <sys/wait.h>
#include <unistd.h>

#include <nlohmann/json.hpp>

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <memory>
#include <sstream>
#include <string>
#include <vector>

namespace tt::test {

// Note [One Python, a fork per check]
// The emitter tests check generated code in Python, each check a script that imports torch. As a
// `python3 check.py` per check, every one paid `import torch` (~2 s of CPU, most of what those
// test cases cost). A PythonSession starts /usr/bin/python3 once, imports torch there, and runs
// each script in a child forked from it: the child runs the script as __main__ with the given
// argv (its folder first on sys.path, as `python3 script.py` does), file descriptors 1 and 2 (so
// LibTorch's own messages too) go to a file, and the child's exit status is the script's. A fork
// leaves nothing behind in the session (a check's seeds, engines or modules die with its child),
// so the checks stay as independent as separate processes. The session has run nothing before it
// forks, so no thread pool is forked either.
class PythonSession {
 public:
  // The binary's session, started on first use; nullptr when /usr/bin/python3 cannot import torch.
  static PythonSession* get() {
    static std::unique_ptr<PythonSession> session = start();
    return session.get();
  }

  // Runs `python3 argv...` in a fork of the session; returns the exit status (-1 for a signal or a
  // lost session) and sets output to what the script wrote on stdout and stderr.
  int run(const std::vector<std::string>& argv, std::string& output) {
    output.clear();
    std::string out_path = out_dir_ + "/out.txt";
    nlohmann::json req = {{"argv", argv}, {"out", out_path}};
    std::string line = req.dump() + "\n";
    if (fwrite(line.data(), 1, line.size(), to_) != line.size() || fflush(to_) != 0) return -1;
    char buf[64];
    if (!fgets(buf, sizeof buf, from_)) return -1;
    int rc = std::atoi(buf);
    std::ifstream f(out_path, std::ios::binary);
    std::stringstream ss;
    ss << f.rdbuf();
    output = ss.str();
    return rc < 0 ? -1 : rc;
  }

  ~PythonSession() {
    if (to_) fclose(to_);  // end of input: the session exits
    if (from_) fclose(from_);
    if (pid_ > 0) waitpid(pid_, nullptr, 0);
    std::error_code ec;
    std::filesystem::remove_all(out_dir_, ec);
  }

 private:
  static constexpr const char* kServer = R"PY(
import json, os, runpy, sys, traceback
import torch  # noqa: F401  (once: every check forks from here)
sys.stdout.write("ready\n")
sys.stdout.flush()
for line in sys.stdin:
    req = json.loads(line)
    pid = os.fork()
    if pid == 0:
        fd = os.open(req["out"], os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o644)
        os.dup2(fd, 1)
        os.dup2(fd, 2)
        os.close(fd)
        null = os.open(os.devnull, os.O_RDONLY)
        os.dup2(null, 0)
        os.close(null)
        sys.argv = list(req["argv"])
        sys.path.insert(0, os.path.dirname(os.path.abspath(sys.argv[0])))
        code = 0
        try:
            runpy.run_path(sys.argv[0], run_name="__main__")
        except SystemExit as e:
            if e.code is None or isinstance(e.code, int):
                code = e.code or 0
            else:
                print(e.code, file=sys.stderr)
                code = 1
        except BaseException:
            traceback.print_exc()
            code = 1
        sys.stdout.flush()
        sys.stderr.flush()
        os._exit(code)
    _, status = os.waitpid(pid, 0)
    sys.stdout.write(f"{os.waitstatus_to_exitcode(status)}\n")
    sys.stdout.flush()
)PY";

  static std::unique_ptr<PythonSession> start() {
    int in[2], out[2];
    if (pipe(in) != 0) return nullptr;
    if (pipe(out) != 0) {
      close(in[0]);
      close(in[1]);
      return nullptr;
    }
    pid_t pid = fork();
    if (pid < 0) return nullptr;
    if (pid == 0) {
      dup2(in[0], 0);
      dup2(out[1], 1);
      close(in[0]);
      close(in[1]);
      close(out[0]);
      close(out[1]);
      execl("/usr/bin/python3", "python3", "-c", kServer, static_cast<char*>(nullptr));
      _exit(127);
    }
    close(in[0]);
    close(out[1]);
    auto s = std::unique_ptr<PythonSession>(new PythonSession());
    s->pid_ = pid;
    s->to_ = fdopen(in[1], "w");
    s->from_ = fdopen(out[0], "r");
    std::string tmpl = (std::filesystem::temp_directory_path() / "tt_pysession_XXXXXX").string();
    if (!s->to_ || !s->from_ || !mkdtemp(tmpl.data())) return nullptr;
    s->out_dir_ = tmpl;
    char buf[64];
    if (!fgets(buf, sizeof buf, s->from_) || std::string(buf) != "ready\n") return nullptr;
    return s;
  }

  PythonSession() = default;
  pid_t pid_ = -1;
  FILE* to_ = nullptr;
  FILE* from_ = nullptr;
  std::string out_dir_;
};

// `python3 argv...` in the binary's session (-1, with the reason as output, when it cannot start).
inline int run_python(const std::vector<std::string>& argv, std::string& output) {
  PythonSession* s = PythonSession::get();
  if (!s) {
    output = "cannot start /usr/bin/python3 with torch";
    return -1;
  }
  return s->run(argv, output);
}

}  // namespace tt::test
