// The records of a PyTorch zip archive mapped from the file (mapped_records.h).
//
// Note [Weights mapped from the archive]
// LibTorch reads every record of an archive into memory it allocates (PyTorchStreamReader::
// getRecord: allocate, then read into it), so a load costs one copy of all the weights and holds
// them all at once: a model larger than memory cannot load. Yet the data/ records of PyTorch's
// zip archives are stored (uncompressed) zip entries, so each storage can be a view of a mapping
// of the file. LibTorch has no hook for that (DeserializationStorageContext serves only
// torch.package's layout), so MappedArchive does it around LibTorch's own unpickling
// (torch::jit::load for a TorchScript archive, lib/loaders/torchscript/mapped_load.cpp;
// readArchiveAndTensors for the state dict of a .pt2, lib/loaders/export/archive.cpp, whose
// torch.save zip is itself one stored entry of the .pt2's zip: the same records at an offset):
// 1. It lists the data/ records' offsets and sizes and maps the archive's part of the file once,
//    MAP_PRIVATE (copy-on-write: a pass that writes into a weight changes its own copy, never the
//    file).
// 2. During the load, a CPU allocator of its own gives each allocation of at least 64 KiB an
//    anonymous mapping (MAP_NORESERVE: untouched pages cost nothing), and the read adapter LibTorch
//    reads through skips the copy when a read is exactly one data/ record's bytes into exactly one
//    such allocation, remembering the record's offset. Every other read is copied as usual.
// 3. After the load it walks every value reachable from what was loaded (module attributes, and
//    the lists, tuples, dicts and objects in them) and points each storage whose memory is a
//    skipped allocation at the record's bytes in the file mapping (StorageImpl::
//    set_data_ptr_noswap); the allocation is freed.
// 4. A skipped allocation the walk did not reach, or whose record is misaligned (below), is read
//    from the file after all (counted in MappedLoadStats::filled), so no storage is ever left
//    without its bytes.
// Alignment: a storage is mapped only when its bytes' address is a multiple of the element size
// of every tensor that views it. That is the alignment any tensor view has (x[1:] of a float
// tensor starts 4 bytes into its storage), so every kernel already handles it; an allocation is
// 64-byte aligned, a view may be less. TorchScript archives align records to 64 bytes in the
// file, and torch.save's zip (the state dict inside a .pt2) within itself; but Python's zipfile
// puts that zip at any offset of the .pt2 (after the program's JSON: offset % 4 is anything), and
// a mapping keeps the file's offset modulo the page size. So when the archive does not start at a
// multiple of 64 in the file, step 1 maps an aligned copy instead: an unnamed file (O_TMPFILE) in
// the input's directory (else in $TMPDIR or /tmp) that holds the archive's bytes from offset 0,
// written with copy_file_range (the kernel copies page cache to page cache, or shares the blocks
// on a file system that can; nothing in tinytrace's memory) and gone when the mapping is. Where no
// such file can be made, misaligned records are read into memory (MappedLoadStats::misaligned).
// Between 2 and 3 a skipped storage holds zeros. Nothing in LibTorch reads a tensor's values while
// it unpickles, except code the archive runs at load time: a __setstate__ of a module or class
// (TorchScript code), or of a C++ custom class (torch.classes, e.g. the quantized packed params).
// An archive with either loads the usual way (the TorchScript loader checks; the .pt2 state dict
// holds tensors only). constants.pkl's tensors (constants/ records) are always copied: the
// compiler compares constant tensors' values when it pools them.
// Memory: the mapped pages belong to the page cache, so under a memory limit the kernel drops them
// and reads them again when touched: a model larger than the memory limit converts
// (test e2e_mapped_weights_over_memory). Like any mapping, the file must not be truncated while
// tinytrace runs; the outputs are renamed into place, so even a NAME.pt written over the input
// leaves the mapped file alone.
#include "loaders/mapped_records.h"

#include "loaders/loader.h"

#include <c10/core/CPUAllocator.h>

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <limits>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <mutex>
#include <stdexcept>
#include <unordered_set>
#include <vector>

namespace tt {
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

// The archive's bytes: pread at the archive's offset in the file, except (step 2) a whole data/
// record read into a whole placeholder.
class SkippingReader final : public caffe2::serialize::ReadAdapterInterface {
 public:
  SkippingReader(int fd, uint64_t offset, uint64_t size) : fd_(fd), offset_(offset), size_(size) {}
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
    if (pos >= size_) return 0;
    size_t done = 0;
    pread_all(fd_, offset_ + pos, buf, size_t(std::min<uint64_t>(n, size_ - pos)), &done);
    return done;
  }

 private:
  int fd_;
  uint64_t offset_, size_;
};

// Copies n bytes from in_fd at in_off to out_fd at out_off: copy_file_range, and pread/pwrite
// where the kernel cannot (EXDEV, ENOSYS, EINVAL, ...) or stops short. False on a read or write
// error.
bool copy_range(int in_fd, uint64_t in_off, int out_fd, uint64_t out_off, uint64_t n) {
  while (n > 0) {
    loff_t i = loff_t(in_off), o = loff_t(out_off);
    ssize_t r =
        ::copy_file_range(in_fd, &i, out_fd, &o, size_t(std::min<uint64_t>(n, 1u << 30)), 0);
    if (r < 0 && errno == EINTR) continue;
    if (r <= 0) break;
    in_off += uint64_t(r), out_off += uint64_t(r), n -= uint64_t(r);
  }
  std::vector<char> buf(size_t(std::min<uint64_t>(n, uint64_t(1) << 20)));
  while (n > 0) {
    size_t chunk = size_t(std::min<uint64_t>(n, buf.size())), done = 0;
    if (!pread_all(in_fd, in_off, buf.data(), chunk, &done)) return false;
    for (size_t w = 0; w < chunk;) {
      ssize_t r = ::pwrite(out_fd, buf.data() + w, chunk - w, off_t(out_off + w));
      if (r < 0 && errno == EINTR) continue;
      if (r <= 0) return false;
      w += size_t(r);
    }
    in_off += chunk, out_off += chunk, n -= chunk;
  }
  return true;
}

// An unnamed file holding bytes [offset, offset + size) of fd from its offset 0 (Alignment in the
// Note), or -1 when none can be made.
int aligned_copy(const std::string& path, int fd, uint64_t offset, uint64_t size) {
  std::string dir = std::filesystem::path(path).parent_path().string();
  const char* tmp = std::getenv("TMPDIR");
  for (const std::string& d :
       {dir.empty() ? std::string(".") : dir, std::string(tmp && *tmp ? tmp : "/tmp")}) {
    int out = ::open(d.c_str(), O_TMPFILE | O_RDWR | O_CLOEXEC, 0600);
    if (out < 0) continue;
    if (copy_range(fd, offset, out, 0, size)) return out;
    ::close(out);
  }
  return -1;
}

struct FileMapping {
  void* base = nullptr;
  size_t size = 0;
  int fd = -1;  // the mapped file, for copying records out of it (unchanged_record)
  ~FileMapping() {
    if (base) ::munmap(base, size);
    if (fd >= 0) ::close(fd);
  }
};

// The records storages point at, while they do (Note [Unchanged records]).
struct MappedRecord {
  uint64_t size = 0;
  int fd = -1;
  uint64_t file_offset = 0;
  uint32_t crc = 0;
  size_t views = 0;
};
struct Registry {
  std::mutex mu;
  std::unordered_map<const void*, MappedRecord> records;
};
Registry& registry() {
  static Registry r;
  return r;
}

// A storage's DataPtr context: the mapping it keeps alive, and its record in the registry.
struct MappedView {
  std::shared_ptr<FileMapping> mapping;
  const void* data = nullptr;
  bool registered = false;
};

void release_mapping(void* ctx) {
  auto* view = static_cast<MappedView*>(ctx);
  if (view->registered) {
    Registry& r = registry();
    std::lock_guard<std::mutex> lock(r.mu);
    auto it = r.records.find(view->data);
    if (it != r.records.end() && --it->second.views == 0) r.records.erase(it);
  }
  delete view;
}

// Calls fn on every tensor reachable from v (objects visited once).
void each_tensor(const c10::IValue& v, std::unordered_set<const void*>& seen,
                 const std::function<void(const at::Tensor&)>& fn) {
  if (v.isTensor()) {
    const at::Tensor& t = v.toTensor();
    if (t.defined() && t.has_storage()) fn(t);
  } else if (v.isObject()) {
    auto o = v.toObject();
    if (!seen.insert(o.get()).second) return;
    for (const c10::IValue& slot : o->slots()) each_tensor(slot, seen, fn);
  } else if (v.isTuple()) {
    for (const c10::IValue& e : v.toTupleRef().elements()) each_tensor(e, seen, fn);
  } else if (v.isList()) {
    for (const c10::IValue& e : v.toListRef()) each_tensor(e, seen, fn);
  } else if (v.isGenericDict()) {
    for (const auto& kv : v.toGenericDict()) {
      each_tensor(kv.key(), seen, fn);
      each_tensor(kv.value(), seen, fn);
    }
  }
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

MappedArchive::MappedArchive(const std::string& path)
    : MappedArchive(path, 0, std::numeric_limits<uint64_t>::max()) {}

MappedArchive::MappedArchive(const std::string& path, uint64_t offset, uint64_t size)
    : path_(path), offset_(offset) {
  fd_ = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  struct stat sb {};
  if (fd_ < 0 || ::fstat(fd_, &sb) != 0 || !S_ISREG(sb.st_mode) || sb.st_size == 0 ||
      offset > uint64_t(sb.st_size)) {
    error_ = "not a regular file";
    return;
  }
  size_ = std::min(size, uint64_t(sb.st_size) - offset);
  adapter_ = std::make_shared<SkippingReader>(fd_, offset_, size_);
}

MappedArchive::~MappedArchive() {
  if (fd_ >= 0) ::close(fd_);
}

size_t MappedArchive::mark_records(caffe2::serialize::PyTorchStreamReader& reader) {
  for (const std::string& name : reader.getAllRecords()) {
    if (name.rfind("data/", 0) != 0) continue;
    size_t size = reader.getRecordSize(name);
    size_t offset = reader.getRecordOffset(name);
    if (size >= kMinMapped && offset + size <= size_) records_.emplace(offset, size);
  }
  // Their CRC-32s, for copying unchanged ones to NAME.pth (Note [Unchanged records]).
  if (!records_.empty())
    for (const ZipRecord& r : zip_records(path_, offset_, size_))
      if (records_.count(r.data_offset) && records_.at(r.data_offset) == r.size)
        crcs_.emplace(r.data_offset, r.crc);
  return records_.size();
}

c10::IValue MappedArchive::load(const std::function<c10::IValue()>& unpickle, MappedLoadStats& st) {
  st = MappedLoadStats{};
  if (records_.empty()) {
    st.reason = "no data/ record of 64 KiB or more";
    return unpickle();
  }
  // The archive's part of the file, from the page its first byte is on; or its aligned copy.
  int fd = fd_;
  uint64_t offset = offset_;
  if (offset_ % 64 != 0) {
    int copy = aligned_copy(path_, fd_, offset_, size_);
    if (copy >= 0) fd = copy, offset = 0, st.realigned = true;
  }
  const uint64_t page = uint64_t(::sysconf(_SC_PAGESIZE));
  const uint64_t start = offset / page * page;
  auto mapping = std::make_shared<FileMapping>();
  void* base = ::mmap(nullptr, size_t(offset + size_ - start), PROT_READ | PROT_WRITE, MAP_PRIVATE,
                      fd, off_t(start));
  if (base == MAP_FAILED) {
    if (fd != fd_) ::close(fd);
    st.reason = "mmap failed";
    return unpickle();
  }
  mapping->base = base;
  mapping->size = size_t(offset + size_ - start);
  mapping->fd = fd != fd_ ? fd : ::dup(fd_);  // the copy, or the file
  char* archive = static_cast<char*>(base) + (offset - start);

  static c10::Allocator* usual = c10::GetCPUAllocator();
  static PlaceholderAllocator mine(usual);
  LoadState& s = load_state();
  ActiveLoad active(&mine, usual);
  if (!active.installed()) {
    st.reason = "another CPU allocator is installed";
    return unpickle();
  }
  {
    std::lock_guard<std::mutex> lock(s.mu);
    s.records = records_;
    s.active = true;
  }
  c10::IValue loaded = unpickle();

  // Step 3: storages reachable from what was loaded become views of the mapping, when aligned
  // for every dtype that views them.
  std::unordered_map<c10::StorageImpl*, size_t> alignment;
  std::vector<c10::StorageImpl*> order;
  std::unordered_set<const void*> seen;
  each_tensor(loaded, seen, [&](const at::Tensor& t) {
    c10::StorageImpl* storage = t.storage().unsafeGetStorageImpl();
    auto [it, fresh] = alignment.emplace(storage, t.dtype().itemsize());
    if (fresh) order.push_back(storage);
    it->second = std::max(it->second, size_t(t.dtype().itemsize()));
  });
  for (c10::StorageImpl* storage : order) {
    uint64_t record = 0;
    {
      std::lock_guard<std::mutex> lock(s.mu);
      auto it = s.skipped.find(storage->data_ptr().get());
      if (it == s.skipped.end()) continue;
      if (reinterpret_cast<uintptr_t>(archive + it->second) % alignment.at(storage) != 0) {
        st.misaligned += 1;
        continue;
      }
      record = it->second;
      s.skipped.erase(it);
    }
    st.records += 1;
    st.bytes += storage->nbytes();
    auto* view = new MappedView{mapping, archive + record, false};
    auto crc = crcs_.find(record);
    if (mapping->fd >= 0 && crc != crcs_.end()) {
      Registry& r = registry();
      std::lock_guard<std::mutex> lock(r.mu);
      MappedRecord& m = r.records[view->data];
      m = MappedRecord{records_.at(record), mapping->fd, offset + record, crc->second, m.views + 1};
      view->registered = true;
    }
    storage->set_data_ptr_noswap(
        c10::DataPtr(archive + record, view, &release_mapping, c10::Device(c10::kCPU)));
  }
  // Step 4: whatever was not mapped gets its bytes the usual way.
  std::vector<std::pair<void*, uint64_t>> left;
  {
    std::lock_guard<std::mutex> lock(s.mu);
    for (const auto& [buf, offset] : s.skipped) left.emplace_back(const_cast<void*>(buf), offset);
  }
  for (const auto& [buf, record] : left) {
    size_t n = 0;
    {
      std::lock_guard<std::mutex> lock(s.mu);
      n = s.placeholders.at(buf);
    }
    size_t done = 0;
    if (!pread_all(fd_, offset_ + record, buf, n, &done))
      throw std::runtime_error("cannot read the weights of " + path_ + ": " +
                               std::strerror(errno ? errno : EIO));
    st.filled += 1;
  }
  st.mapped = true;
  return loaded;
}

// Note [Unchanged records]
// A storage that load() pointed at a record, whose size is still the record's and whose pages
// were never written (private_pages_unwritten), holds exactly the record's bytes: NAME.pth's
// writer then copies them from the file (copy_file_range: no pass through tinytrace's memory, no
// page of the mapping touched) with the CRC-32 the archive's central directory gives for them
// (LibTorch's reader does not check CRCs, so they are the input's, as the bytes are). The
// registry holds, for every such storage's data pointer, the record's size, file, offset and CRC
// while the storage points there; a storage that changes its data pointer is not in it.
std::optional<RecordSource> unchanged_record(const void* data, uint64_t size) {
  RecordSource src;
  {
    Registry& r = registry();
    std::lock_guard<std::mutex> lock(r.mu);
    auto it = r.records.find(data);
    if (it == r.records.end() || it->second.size != size) return std::nullopt;
    src = RecordSource{it->second.fd, it->second.file_offset, it->second.crc};
  }
  if (!private_pages_unwritten(data, size_t(size))) return std::nullopt;
  return src;
}

// Note [Unwritten pages of a private mapping]
// A page of a MAP_PRIVATE file mapping is, until something writes into it, the file's page in the
// page cache (or not present at all: never touched, or dropped by the kernel, which can drop a
// page cache page but never the only copy of written data). The first write gives the process an
// anonymous copy of the page. /proc/self/pagemap says which, for every page, in 64 bits: 63
// present, 62 swapped, 61 "file page or shared anonymous". So a page still holds the file's bytes
// when it is not swapped and either not present or a file page; a written page is present without
// bit 61, or swapped. Conservative on every edge: a range's first and last pages count whole (a
// write next to the range, on the same page, counts as a write into it), and when pagemap cannot
// be read the answer is "written".
bool private_pages_unwritten(const void* p, size_t n) {
  if (n == 0) return true;
  const uint64_t page = uint64_t(::sysconf(_SC_PAGESIZE));
  const uint64_t first = reinterpret_cast<uintptr_t>(p) / page;
  const uint64_t last = (reinterpret_cast<uintptr_t>(p) + n - 1) / page;
  int fd = ::open("/proc/self/pagemap", O_RDONLY | O_CLOEXEC);
  if (fd < 0) return false;
  constexpr uint64_t kPresent = uint64_t(1) << 63, kSwapped = uint64_t(1) << 62,
                     kFilePage = uint64_t(1) << 61;
  std::vector<uint64_t> entries;
  bool unwritten = true;
  for (uint64_t at = first; unwritten && at <= last; at += entries.size()) {
    entries.resize(size_t(std::min<uint64_t>(last - at + 1, 4096)));
    size_t done = 0;
    if (!pread_all(fd, at * sizeof(uint64_t), entries.data(), entries.size() * sizeof(uint64_t),
                   &done)) {
      unwritten = false;
      break;
    }
    for (uint64_t e : entries)
      if ((e & kSwapped) || ((e & kPresent) && !(e & kFilePage))) unwritten = false;
  }
  ::close(fd);
  return unwritten;
}

}  // namespace tt
