// torch::jit::load with the weights mapped from the archive instead of copied into memory.
//
// Note [Weights mapped from the archive]
// torch::jit::load reads every record of the archive into memory it allocates
// (PyTorchStreamReader::getRecord: allocate, then read into it), so a load costs one copy of all
// the weights and holds them all at once: a model larger than memory cannot load. Yet the data/
// records of a TorchScript archive are stored (uncompressed) zip entries at 64-byte aligned
// offsets, so each storage can be a view of a mapping of the file. LibTorch has no hook for that
// on the TorchScript path (DeserializationStorageContext serves only torch.package's layout), so
// load_mapped does it around torch::jit::load:
// 1. It maps the whole file once, MAP_PRIVATE (copy-on-write: a pass that writes into a weight
//    changes its own copy, never the file), and lists the data/ records' offsets and sizes.
// 2. During the load, a CPU allocator of its own gives each allocation of at least 64 KiB an
//    anonymous mapping (MAP_NORESERVE: untouched pages cost nothing), and the read adapter LibTorch
//    reads through skips the copy when a read is exactly one data/ record's bytes into exactly one
//    such allocation, remembering the record's offset. Every other read is copied as usual.
// 3. After the load it walks every value reachable from the module (attributes, and the lists,
//    tuples, dicts and objects in them) and points each storage whose memory is a skipped
//    allocation at the record's bytes in the file mapping (StorageImpl::set_data_ptr_noswap); the
//    allocation is freed.
// 4. A skipped allocation the walk did not reach is read from the file after all (counted in
//    MappedLoadStats::filled), so no storage is ever left without its bytes.
// Between 2 and 3 a skipped storage holds zeros. Nothing in LibTorch reads a tensor's values while
// it unpickles data.pkl, except code the archive runs at load time: a __setstate__ of a module or
// class (TorchScript code), or of a C++ custom class (torch.classes, e.g. the quantized packed
// params). An archive with either loads the usual way. constants.pkl's tensors (constants/
// records) are always copied: the compiler compares constant tensors' values when it pools them.
// Memory: the mapped pages belong to the page cache, so under a memory limit the kernel drops them
// and reads them again when touched: a model larger than the memory limit converts
// (test e2e_mapped_weights_over_memory). Like any mapping, the file must not be truncated while tinytrace
// runs; the outputs are renamed into place, so even a NAME.pt written over the input leaves the
// mapped file alone.
#include "loaders/torchscript/mapped_load.h"

#include <c10/core/CPUAllocator.h>
#include <caffe2/serialize/inline_container.h>
#include <caffe2/serialize/read_adapter_interface.h>
#include <torch/csrc/jit/serialization/import.h>

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <functional>
#include <memory>
#include <mutex>
#include <stdexcept>
#include <unordered_map>
#include <unordered_set>

namespace tt::ts {
namespace {

constexpr size_t kMinMapped = size_t(64) << 10;
// A skipped allocation is one mapping until step 3 frees it: stay far below vm.max_map_count.
constexpr size_t kMaxPlaceholders = 16384;

// The state of the one load in progress. The allocator's deleter may run on any thread, and after
// the load too (then the maps are empty).
struct LoadState {
  std::mutex mu;
  bool active = false;
  std::unordered_map<const void*, size_t> placeholders;  // live mapped allocations: size
  std::unordered_map<uint64_t, uint64_t> records;        // data/ record: data offset -> size
  std::unordered_map<const void*, uint64_t> skipped;     // allocation -> its record's offset
};

LoadState& load_state() {
  static LoadState s;
  return s;
}

struct Region {
  void* start;
  size_t size;
};

void free_placeholder(void* ctx) {
  auto* r = static_cast<Region*>(ctx);
  {
    LoadState& s = load_state();
    std::lock_guard<std::mutex> lock(s.mu);
    s.placeholders.erase(r->start);
    s.skipped.erase(r->start);
  }
  ::munmap(r->start, r->size);
  delete r;
}

// Step 2's allocator. It stays installed only during the load, but lives forever: a storage
// allocated through it keeps a pointer to it (for resizing).
class PlaceholderAllocator final : public c10::Allocator {
 public:
  explicit PlaceholderAllocator(c10::Allocator* usual) : usual_(usual) {}
  c10::DataPtr allocate(size_t n) override {
    if (n >= kMinMapped) {
      LoadState& s = load_state();
      std::lock_guard<std::mutex> lock(s.mu);
      if (s.active && s.placeholders.size() < kMaxPlaceholders) {
        void* p = ::mmap(nullptr, n, PROT_READ | PROT_WRITE,
                         MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
        if (p != MAP_FAILED) {
          s.placeholders.emplace(p, n);
          return {p, new Region{p, n}, &free_placeholder, c10::Device(c10::kCPU)};
        }
      }
    }
    return usual_->allocate(n);
  }
  void copy_data(void* dest, const void* src, std::size_t count) const override {
    default_copy_data(dest, src, count);
  }

 private:
  c10::Allocator* usual_;
};

bool pread_all(int fd, uint64_t pos, void* buf, size_t n, size_t* done) {
  char* p = static_cast<char*>(buf);
  *done = 0;
  while (*done < n) {
    ssize_t r = ::pread(fd, p + *done, n - *done, off_t(pos + *done));
    if (r < 0 && errno == EINTR) continue;
    if (r <= 0) return false;
    *done += size_t(r);
  }
  return true;
}

// Step 2's read adapter: pread, except for a whole data/ record read into a whole placeholder.
class SkippingReader final : public caffe2::serialize::ReadAdapterInterface {
 public:
  SkippingReader(int fd, uint64_t size) : fd_(fd), size_(size) {}
  size_t size() const override { return size_t(size_); }
  size_t read(uint64_t pos, void* buf, size_t n, const char* /*what*/) const override {
    if (n >= kMinMapped) {
      LoadState& s = load_state();
      std::lock_guard<std::mutex> lock(s.mu);
      auto p = s.placeholders.find(buf);
      auto r = s.records.find(pos);
      if (s.active && p != s.placeholders.end() && p->second == n && r != s.records.end() &&
          r->second == n && s.skipped.emplace(buf, pos).second)
        return n;
    }
    size_t done = 0;
    pread_all(fd_, pos, buf, n, &done);
    return done;
  }

 private:
  int fd_;
  uint64_t size_;
};

struct FileMapping {
  void* base = nullptr;
  size_t size = 0;
  ~FileMapping() {
    if (base) ::munmap(base, size);
  }
};

void release_mapping(void* ctx) { delete static_cast<std::shared_ptr<FileMapping>*>(ctx); }

void each_storage(const c10::IValue& v, std::unordered_set<const void*>& seen,
                  const std::function<void(c10::StorageImpl*)>& fn) {
  if (v.isTensor()) {
    const at::Tensor& t = v.toTensor();
    if (t.defined() && t.has_storage()) fn(t.storage().unsafeGetStorageImpl());
  } else if (v.isObject()) {
    auto o = v.toObject();
    if (!seen.insert(o.get()).second) return;
    for (const c10::IValue& slot : o->slots()) each_storage(slot, seen, fn);
  } else if (v.isTuple()) {
    for (const c10::IValue& e : v.toTupleRef().elements()) each_storage(e, seen, fn);
  } else if (v.isList()) {
    for (const c10::IValue& e : v.toListRef()) each_storage(e, seen, fn);
  } else if (v.isGenericDict()) {
    for (const auto& kv : v.toGenericDict()) {
      each_storage(kv.key(), seen, fn);
      each_storage(kv.value(), seen, fn);
    }
  }
}

class Fd {
 public:
  explicit Fd(int fd) : fd_(fd) {}
  ~Fd() {
    if (fd_ >= 0) ::close(fd_);
  }
  int get() const { return fd_; }

 private:
  int fd_;
};

// Why the archive's weights cannot be mapped (code that runs while it loads), or "".
std::string runs_code_at_load(caffe2::serialize::PyTorchStreamReader& reader,
                              const std::vector<std::string>& names) {
  auto record_text = [&](const std::string& name) {
    auto [data, size] = reader.getRecord(name);
    return std::string(static_cast<const char*>(data.get()), size);
  };
  for (const std::string& name : names) {
    bool code = name.rfind("code/", 0) == 0 && name.size() > 3 &&
                name.compare(name.size() - 3, 3, ".py") == 0;
    if (code && record_text(name).find("__setstate__") != std::string::npos)
      return "its code defines __setstate__";
    if (name == "data.pkl" && record_text(name).find("torch.classes") != std::string::npos)
      return "it holds C++ custom class objects";
  }
  return "";
}

// The installation of PlaceholderAllocator and the active load state, undone on every exit.
class ActiveLoad {
 public:
  ActiveLoad(c10::Allocator* mine, c10::Allocator* usual) : usual_(usual) {
    c10::SetCPUAllocator(mine, /*priority=*/0);
    installed_ = c10::GetCPUAllocator() == mine;
  }
  ~ActiveLoad() {
    if (installed_) c10::SetCPUAllocator(usual_, /*priority=*/0);
    LoadState& s = load_state();
    std::lock_guard<std::mutex> lock(s.mu);
    s.active = false;
    s.records.clear();
    s.skipped.clear();
  }
  bool installed() const { return installed_; }

 private:
  c10::Allocator* usual_;
  bool installed_ = false;
};

}  // namespace

torch::jit::Module load_mapped(const std::string& path, MappedLoadStats* stats) {
  MappedLoadStats local;
  MappedLoadStats& st = stats ? *stats : local;
  st = MappedLoadStats{};
  auto usual_load = [&](const std::string& why) {
    st.reason = why;
    return torch::jit::load(path, c10::Device(c10::kCPU));
  };
  Fd fd(::open(path.c_str(), O_RDONLY | O_CLOEXEC));
  struct stat sb {};
  if (fd.get() < 0 || ::fstat(fd.get(), &sb) != 0 || !S_ISREG(sb.st_mode) || sb.st_size == 0)
    return usual_load("not a regular file");
  auto adapter = std::make_shared<SkippingReader>(fd.get(), uint64_t(sb.st_size));

  std::unordered_map<uint64_t, uint64_t> records;
  try {
    caffe2::serialize::PyTorchStreamReader reader(adapter);
    std::vector<std::string> names = reader.getAllRecords();
    if (std::string why = runs_code_at_load(reader, names); !why.empty()) return usual_load(why);
    for (const std::string& name : names) {
      if (name.rfind("data/", 0) != 0) continue;
      size_t size = reader.getRecordSize(name);
      size_t offset = reader.getRecordOffset(name);
      if (size >= kMinMapped && offset % 64 == 0 && offset + size <= uint64_t(sb.st_size))
        records.emplace(offset, size);
    }
  } catch (const std::exception&) {
    return usual_load("not a readable archive");  // torch::jit::load says why
  }
  if (records.empty()) return usual_load("no data/ record of 64 KiB or more");

  auto mapping = std::make_shared<FileMapping>();
  void* base =
      ::mmap(nullptr, size_t(sb.st_size), PROT_READ | PROT_WRITE, MAP_PRIVATE, fd.get(), 0);
  if (base == MAP_FAILED) return usual_load("mmap failed");
  mapping->base = base;
  mapping->size = size_t(sb.st_size);

  static c10::Allocator* usual = c10::GetCPUAllocator();
  static PlaceholderAllocator mine(usual);
  LoadState& s = load_state();
  ActiveLoad active(&mine, usual);
  if (!active.installed()) return usual_load("another CPU allocator is installed");
  {
    std::lock_guard<std::mutex> lock(s.mu);
    s.records = std::move(records);
    s.active = true;
  }
  torch::jit::Module module = torch::jit::load(adapter, c10::Device(c10::kCPU));

  // Step 3: storages reachable from the module become views of the mapping.
  std::unordered_set<const void*> seen;
  each_storage(module._ivalue(), seen, [&](c10::StorageImpl* storage) {
    uint64_t offset = 0;
    {
      std::lock_guard<std::mutex> lock(s.mu);
      auto it = s.skipped.find(storage->data_ptr().get());
      if (it == s.skipped.end()) return;
      offset = it->second;
      s.skipped.erase(it);
    }
    st.records += 1;
    st.bytes += storage->nbytes();
    storage->set_data_ptr_noswap(c10::DataPtr(static_cast<char*>(base) + offset,
                                              new std::shared_ptr<FileMapping>(mapping),
                                              &release_mapping, c10::Device(c10::kCPU)));
  });
  // Step 4: whatever the walk did not reach gets its bytes the usual way.
  std::vector<std::pair<void*, uint64_t>> left;
  {
    std::lock_guard<std::mutex> lock(s.mu);
    for (const auto& [buf, offset] : s.skipped) left.emplace_back(const_cast<void*>(buf), offset);
  }
  for (const auto& [buf, offset] : left) {
    size_t n = 0;
    {
      std::lock_guard<std::mutex> lock(s.mu);
      n = s.placeholders.at(buf);
    }
    size_t done = 0;
    if (!pread_all(fd.get(), offset, buf, n, &done))
      throw std::runtime_error("cannot read the weights of " + path + ": " +
                               std::strerror(errno ? errno : EIO));
    st.filled += 1;
  }
  st.mapped = true;
  return module;
}

}  // namespace tt::ts
