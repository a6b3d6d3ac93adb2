// LD_PRELOAD shim for the fault-injection tests (tests/e2e/fault_injection.py).
//
// Note [Fault shim]
// Faults that a test cannot cause unprivileged or at a precise moment are injected here, in the
// process under test, on the I/O calls of one file. The environment says which file and what:
//   TT_FAULT_PATH  a glob (fnmatch, '*' also matches '/') for the path of the file descriptor
//   TT_FAULT_OP    read | write | copy: which calls (read/fread, write/writev/fwrite, or
//                  copy_file_range into the file); copy+write: copy_file_range calls, and the
//                  writes of the file once a copy_file_range into it has failed (the fallback of
//                  a failed copy failing too)
//   TT_FAULT       stop: raise SIGSTOP at the first matching call, once, so the test can act at
//                  that moment (delete the output directory, send a signal) and then SIGCONT;
//                  short: a matching copy_file_range copies at most 1000 bytes;
//                  short+EIO: the first matching copy_file_range copies at most 1000 bytes, the
//                  next ones fail with EIO;
//                  ENOSPC | EDQUOT | EXDEV | EIO (any other word): every matching call fails with
//                  that errno (a full disk without a filesystem to fill)
//   TT_FAULT_LOG   optional: a file that gets one line per injected fault, so that a test can
//                  tell that the call it wants to fail was made
// Without TT_FAULT_PATH every call goes straight to libc. Only a test loads this library.
#include <dlfcn.h>
#include <fnmatch.h>
#include <sys/uio.h>
#include <unistd.h>

#include <cerrno>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <cstring>

namespace {

bool g_stopped = false;
bool g_copy_failed = false;  // a copy_file_range fault was injected
int g_copies = 0;            // copy_file_range faults injected

constexpr int kShort = -2;  // copy fewer bytes than asked

void log_fault(const char* op, const char* fault) {
  const char* log = std::getenv("TT_FAULT_LOG");
  if (!log) return;
  int saved = errno;
  if (FILE* f = std::fopen(log, "a")) {
    std::fprintf(f, "%s %s\n", op, fault);
    std::fclose(f);
  }
  errno = saved;
}

bool op_matches(const char* op, const char* want) {
  if (std::strcmp(op, want) == 0) return true;
  if (std::strcmp(want, "copy+write") != 0) return false;
  return std::strcmp(op, "copy") == 0 || (std::strcmp(op, "write") == 0 && g_copy_failed);
}

// The action for an I/O call of kind `op` on `fd`: 0 (none), -1 (stop done), kShort, or an errno.
int fault_for(int fd, const char* op) {
  const char* pattern = std::getenv("TT_FAULT_PATH");
  const char* want_op = std::getenv("TT_FAULT_OP");
  const char* fault = std::getenv("TT_FAULT");
  if (!pattern || !fault || !want_op || !op_matches(op, want_op)) return 0;
  char link[64], path[4096];
  std::snprintf(link, sizeof link, "/proc/self/fd/%d", fd);
  int saved = errno;
  ssize_t n = ::readlink(link, path, sizeof path - 1);
  errno = saved;
  if (n <= 0) return 0;
  path[n] = '\0';
  if (::fnmatch(pattern, path, 0) != 0) return 0;
  if (std::strcmp(fault, "stop") == 0) {
    if (!g_stopped) {
      g_stopped = true;
      ::raise(SIGSTOP);
    }
    return 0;
  }
  log_fault(op, fault);
  if (std::strcmp(op, "copy") == 0) {
    g_copy_failed = true;
    if (std::strcmp(fault, "short") == 0 ||
        (std::strcmp(fault, "short+EIO") == 0 && g_copies++ == 0))
      return kShort;
  }
  if (std::strcmp(fault, "ENOSPC") == 0) return ENOSPC;
  if (std::strcmp(fault, "EDQUOT") == 0) return EDQUOT;
  if (std::strcmp(fault, "EXDEV") == 0) return EXDEV;
  return EIO;
}

template <typename F>
F next(const char* name) {
  return reinterpret_cast<F>(::dlsym(RTLD_NEXT, name));
}

}  // namespace

extern "C" {

ssize_t write(int fd, const void* buf, size_t n) {
  static auto real = next<ssize_t (*)(int, const void*, size_t)>("write");
  if (int err = fault_for(fd, "write"); err > 0) {
    errno = err;
    return -1;
  }
  return real(fd, buf, n);
}

ssize_t writev(int fd, const struct iovec* iov, int count) {
  static auto real = next<ssize_t (*)(int, const struct iovec*, int)>("writev");
  if (int err = fault_for(fd, "write"); err > 0) {
    errno = err;
    return -1;
  }
  return real(fd, iov, count);
}

size_t fwrite(const void* buf, size_t size, size_t count, FILE* f) {
  static auto real = next<size_t (*)(const void*, size_t, size_t, FILE*)>("fwrite");
  if (int err = fault_for(::fileno(f), "write"); err > 0) {
    errno = err;
    return 0;
  }
  return real(buf, size, count, f);
}

ssize_t copy_file_range(int in_fd, off64_t* in_off, int out_fd, off64_t* out_off, size_t n,
                        unsigned int flags) {
  static auto real =
      next<ssize_t (*)(int, off64_t*, int, off64_t*, size_t, unsigned int)>("copy_file_range");
  int err = fault_for(out_fd, "copy");
  if (err == kShort) return real(in_fd, in_off, out_fd, out_off, n < 1000 ? n : 1000, flags);
  if (err > 0) {
    errno = err;
    return -1;
  }
  return real(in_fd, in_off, out_fd, out_off, n, flags);
}

ssize_t read(int fd, void* buf, size_t n) {
  static auto real = next<ssize_t (*)(int, void*, size_t)>("read");
  if (int err = fault_for(fd, "read"); err > 0) {
    errno = err;
    return -1;
  }
  return real(fd, buf, n);
}

size_t fread(void* buf, size_t size, size_t count, FILE* f) {
  static auto real = next<size_t (*)(void*, size_t, size_t, FILE*)>("fread");
  if (int err = fault_for(::fileno(f), "read"); err > 0) {
    errno = err;
    return 0;
  }
  return real(buf, size, count, f);
}

}  // extern "C"
