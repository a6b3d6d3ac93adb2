// Custom op libraries (Note [Op libraries] in loader.h): loading them, finding the ones Debian's
// Python packages install, and what each registered.
#include "loaders/loader.h"

#include <ATen/core/dispatch/Dispatcher.h>

#include <dlfcn.h>
#include <glob.h>

#include <algorithm>
#include <cstdlib>
#include <mutex>
#include <set>

namespace tt {
namespace {

std::mutex& registry_mutex() {
  static std::mutex m;
  return m;
}

std::vector<OpLibrary>& registry() {
  static std::vector<OpLibrary> libs;
  return libs;
}

std::set<std::string> registered_namespaces() {
  std::set<std::string> out;
  for (const c10::OperatorName& n : c10::Dispatcher::singleton().getAllOpNames())
    out.insert(n.name.substr(0, n.name.find("::")));
  return out;
}

// The libraries that Python packages load when imported, by the namespace of their ops, as
// glob patterns below a Python package directory.
struct KnownLibrary {
  const char* ns;
  const char* package;  // what the generated Python imports to register the ops
  const char* pattern;  // below a site/dist-packages directory
};
const KnownLibrary kKnown[] = {
    {"torchvision", "torchvision", "torchvision/_C*.so"},
    {"torchaudio", "torchaudio", "torchaudio/lib/libtorchaudio.so"},
};

// The directories Python looks for packages in: PYTHONPATH, a virtualenv, then the system's
// (Debian's dist-packages, then pip's site-packages).
std::vector<std::string> python_package_dirs() {
  std::vector<std::string> dirs;
  if (const char* pp = std::getenv("PYTHONPATH")) {
    std::string s = pp;
    for (size_t start = 0; start <= s.size();) {
      size_t colon = s.find(':', start);
      std::string d =
          s.substr(start, colon == std::string::npos ? std::string::npos : colon - start);
      if (!d.empty()) dirs.push_back(d);
      if (colon == std::string::npos) break;
      start = colon + 1;
    }
  }
  if (const char* venv = std::getenv("VIRTUAL_ENV"))
    dirs.push_back(std::string(venv) + "/lib/python3*/site-packages");
  for (const char* d : {"/usr/local/lib/python3*/dist-packages", "/usr/lib/python3/dist-packages",
                        "/usr/local/lib/python3*/site-packages", "/usr/lib/python3*/site-packages"})
    dirs.push_back(d);
  return dirs;
}

std::vector<std::string> glob_paths(const std::string& pattern) {
  std::vector<std::string> out;
  glob_t g{};
  if (glob(pattern.c_str(), 0, nullptr, &g) == 0)
    for (size_t i = 0; i < g.gl_pathc; ++i) out.push_back(g.gl_pathv[i]);
  globfree(&g);
  return out;
}

const KnownLibrary* known_library(const std::string& ns) {
  for (const KnownLibrary& k : kKnown)
    if (ns == k.ns) return &k;
  return nullptr;
}

}  // namespace

OpLibrary load_op_library(const std::string& path, const std::string& reason) {
  std::lock_guard<std::mutex> lock(registry_mutex());
  for (const OpLibrary& l : registry())
    if (l.path == path) return l;
  std::set<std::string> before = registered_namespaces();
  // RTLD_GLOBAL: the library's ops register with LibTorch's dispatcher, which every later load
  // (and the interpreter) uses; the handle stays open for the process's lifetime.
  if (!dlopen(path.c_str(), RTLD_NOW | RTLD_GLOBAL)) {
    const char* why = dlerror();
    throw Error(ExitCode::BadInput, "cannot load the op library " + path + " (" +
                                        first_line(why ? why : "unknown reason") +
                                        ") — give the path of a shared library that registers "
                                        "TorchScript ops");
  }
  OpLibrary lib;
  lib.path = path;
  lib.reason = reason;
  for (const std::string& ns : registered_namespaces()) {
    if (before.count(ns)) continue;
    lib.namespaces.push_back(ns);
    // A known package's library (found, or given by hand): its import registers the ops.
    if (const KnownLibrary* k = known_library(ns); k && lib.package.empty())
      lib.package = k->package;
  }
  registry().push_back(std::move(lib));
  return registry().back();
}

std::vector<OpLibrary> loaded_op_libraries() {
  std::lock_guard<std::mutex> lock(registry_mutex());
  return registry();
}

std::string find_op_library(const std::string& ns) {
  const KnownLibrary* k = known_library(ns);
  if (!k) return "";
  for (const std::string& dir : python_package_dirs()) {
    std::vector<std::string> hits = glob_paths(dir + "/" + k->pattern);
    if (!hits.empty()) return hits.front();
  }
  return "";
}

}  // namespace tt
