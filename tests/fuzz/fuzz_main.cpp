// The plain fuzz driver: what runs a fuzz target (tests/fuzz/fuzz_*.cpp) when the build has no
// libFuzzer (g++, the default build), so that the suite's short fuzz runs need no extra compiler.
//
// Note [Plain fuzz driver]
// It takes libFuzzer's command line (the flags below and corpus files or directories), runs every
// corpus input once, then mutates them — byte flips, random bytes, interesting values (0, 0xff,
// 0x7f, 0x80, and the bounds of 16/32-bit lengths), insertions, deletions, truncation, a copied
// chunk, splices of two inputs and, for text, swapped lines — from a fixed seed until
// -max_total_time or -runs. It is blind (no coverage feedback: libFuzzer in the --sanitize build,
// scripts/fuzz.sh, is the real search), but it reaches the same oracle (Note [Fuzz oracle]) and
// replays the regression inputs in testdata/fuzz on every run. Before each input runs it is in a
// buffer a SIGABRT/SIGSEGV/SIGBUS/SIGFPE handler writes to ./crash-<target>, so a finding can be
// replayed: fuzz_X crash-fuzz_X.
//   -max_total_time=S  stop after S seconds of mutation (default 10)
//   -runs=N            stop after N inputs in all (replay included)
//   -seed=N            the mutation seed (default 1)
//   -max_len=N         mutated inputs are cut to N bytes (default 1 MB)
#include <dirent.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <csignal>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <iterator>
#include <random>
#include <string>
#include <vector>

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size);

namespace {

std::string g_current;  // the input being run (the crash handler writes it)
char g_crash_path[512];

void on_crash(int sig) {
  int fd = ::open(g_crash_path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
  if (fd >= 0) {
    size_t off = 0;
    while (off < g_current.size()) {
      ssize_t n = ::write(fd, g_current.data() + off, g_current.size() - off);
      if (n <= 0) break;
      off += static_cast<size_t>(n);
    }
    ::close(fd);
  }
  static const char msg[] = "fuzz: crash; the input is in ";
  (void)!::write(2, msg, sizeof msg - 1);
  (void)!::write(2, g_crash_path, std::strlen(g_crash_path));
  (void)!::write(2, "\n", 1);
  std::signal(sig, SIG_DFL);
  std::raise(sig);
}

void add_inputs(const std::string& path, std::vector<std::string>& corpus) {
  struct stat st {};
  if (::stat(path.c_str(), &st) != 0) {
    std::fprintf(stderr, "fuzz: no such corpus file or directory: %s\n", path.c_str());
    std::exit(2);
  }
  if (S_ISDIR(st.st_mode)) {
    std::vector<std::string> names;
    if (DIR* d = ::opendir(path.c_str())) {
      while (dirent* e = ::readdir(d))
        if (e->d_name[0] != '.') names.push_back(path + "/" + e->d_name);
      ::closedir(d);
    }
    std::sort(names.begin(), names.end());
    for (const auto& n : names) add_inputs(n, corpus);
    return;
  }
  std::ifstream in(path, std::ios::binary);
  corpus.emplace_back(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
}

std::string mutate(const std::vector<std::string>& corpus, std::mt19937_64& rng, size_t max_len) {
  auto pick = [&](size_t n) { return n ? static_cast<size_t>(rng() % n) : 0; };
  std::string s = corpus[pick(corpus.size())];
  static const uint8_t interesting[] = {0, 1, 0x7f, 0x80, 0xff, 0xfe, 0x10, 0x40};
  for (int k = 1 + static_cast<int>(rng() % 4); k-- > 0;) {
    switch (rng() % 10) {
      case 0:  // flip a bit
        if (!s.empty()) s[pick(s.size())] ^= static_cast<char>(1u << (rng() % 8));
        break;
      case 1:  // a random byte
        if (!s.empty()) s[pick(s.size())] = static_cast<char>(rng());
        break;
      case 2:  // an interesting byte
        if (!s.empty()) s[pick(s.size())] = static_cast<char>(interesting[rng() % 8]);
        break;
      case 3: {  // an interesting 16/32-bit value, little-endian
        static const uint32_t words[] = {0,       0xffffffffu, 0x7fffffffu, 0x80000000u,
                                         0xffffu, 0x8000u,     0x7fffu,     0x100u};
        if (s.size() >= 4) {
          uint32_t w = words[rng() % 8];
          size_t at = pick(s.size() - 3);
          std::memcpy(&s[at], &w, rng() % 2 ? 4 : 2);
        }
        break;
      }
      case 4:  // insert random bytes
        s.insert(pick(s.size() + 1), std::string(1 + rng() % 8, static_cast<char>(rng())));
        break;
      case 5:  // erase a range
        if (!s.empty()) {
          size_t at = pick(s.size());
          s.erase(at, 1 + pick(std::min<size_t>(s.size() - at, 64)));
        }
        break;
      case 6:  // truncate
        s.resize(pick(s.size() + 1));
        break;
      case 7:  // copy a chunk elsewhere
        if (!s.empty()) {
          size_t at = pick(s.size());
          std::string chunk = s.substr(at, 1 + pick(64));
          s.insert(pick(s.size() + 1), chunk);
        }
        break;
      case 8: {  // splice with another input
        const std::string& o = corpus[pick(corpus.size())];
        size_t a = pick(s.size() + 1), b = pick(o.size() + 1);
        s = s.substr(0, a) + o.substr(b);
        break;
      }
      case 9: {  // swap two lines (text formats)
        std::vector<std::string> lines;
        size_t start = 0;
        for (size_t nl; (nl = s.find('\n', start)) != std::string::npos; start = nl + 1)
          lines.push_back(s.substr(start, nl + 1 - start));
        lines.push_back(s.substr(start));
        if (lines.size() > 2) {
          std::swap(lines[pick(lines.size())], lines[pick(lines.size())]);
          s.clear();
          for (const auto& l : lines) s += l;
        }
        break;
      }
    }
  }
  if (s.size() > max_len) s.resize(max_len);
  return s;
}

long flag(const std::string& arg, const char* name, long fallback) {
  std::string prefix = std::string("-") + name + "=";
  return arg.rfind(prefix, 0) == 0 ? std::strtol(arg.c_str() + prefix.size(), nullptr, 10)
                                   : fallback;
}

}  // namespace

int main(int argc, char** argv) {
  long seconds = 10, runs = -1, seed = 1, max_len = 1 << 20;
  std::vector<std::string> corpus;
  std::vector<std::string> paths;
  for (int i = 1; i < argc; ++i) {
    std::string a = argv[i];
    if (a[0] == '-') {
      seconds = flag(a, "max_total_time", seconds);
      runs = flag(a, "runs", runs);
      seed = flag(a, "seed", seed);
      max_len = flag(a, "max_len", max_len);
    } else {
      paths.push_back(a);
    }
  }
  for (const auto& p : paths) add_inputs(p, corpus);
  if (corpus.empty()) corpus.emplace_back();
  const char* name = std::strrchr(argv[0], '/');
  std::snprintf(g_crash_path, sizeof g_crash_path, "crash-%s", name ? name + 1 : argv[0]);
  for (int sig : {SIGABRT, SIGSEGV, SIGBUS, SIGFPE, SIGILL}) std::signal(sig, on_crash);

  long done = 0;
  auto run = [&](std::string input) {
    g_current = std::move(input);
    LLVMFuzzerTestOneInput(reinterpret_cast<const uint8_t*>(g_current.data()), g_current.size());
    ++done;
  };
  for (const auto& c : corpus) {
    if (runs >= 0 && done >= runs) break;
    run(c);
  }
  const long replayed = done;
  std::mt19937_64 rng(static_cast<uint64_t>(seed));
  auto start = std::chrono::steady_clock::now();
  auto elapsed = [&] {
    return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  };
  while ((runs < 0 || done < runs) && elapsed() < static_cast<double>(seconds))
    run(mutate(corpus, rng, static_cast<size_t>(max_len)));
  std::printf("fuzz: %s: %ld inputs (%ld corpus, %ld mutated) in %.1f s, no crash\n",
              name ? name + 1 : argv[0], done, replayed, done - replayed, elapsed());
  return 0;
}
