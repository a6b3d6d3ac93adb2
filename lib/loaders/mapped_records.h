// The records of a PyTorch zip archive (a TorchScript archive, or the torch.save'd state dict a
// .pt2 stores inside its own zip) mapped from the file instead of copied into memory (Note
// [Weights mapped from the archive] in mapped_records.cpp). Include only from lib/loaders/.
#pragma once

#include <ATen/core/ivalue.h>
#include <caffe2/serialize/inline_container.h>
#include <caffe2/serialize/read_adapter_interface.h>

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <unordered_map>

namespace tt {

// What MappedArchive::load did, for the log and the tests.
struct MappedLoadStats {
  bool mapped = false;     // false: the records were read the usual way (why: `reason`)
  std::string reason;      // why the weights were not mapped, when they were not
  size_t records = 0;      // data/ records mapped in place of a copy
  uint64_t bytes = 0;      // their bytes
  size_t filled = 0;       // records read the usual way after all (not reachable, or misaligned)
  size_t misaligned = 0;   // of those, records whose bytes in the file are not aligned for their
                           // dtype
  bool realigned = false;  // an aligned copy of the archive was mapped, not the file itself
};

// A PyTorch zip archive at [offset, offset + size) of a file: the whole file for a TorchScript
// archive, one stored (uncompressed) entry of a .pt2. Usage: open a PyTorchStreamReader on
// adapter(), mark the records that may be mapped (mark_records), then unpickle through load().
class MappedArchive {
 public:
  // The whole file.
  explicit MappedArchive(const std::string& path);
  MappedArchive(const std::string& path, uint64_t offset, uint64_t size);
  ~MappedArchive();
  MappedArchive(const MappedArchive&) = delete;
  MappedArchive& operator=(const MappedArchive&) = delete;

  // "" when the file is open; else why not (adapter() is then null).
  const std::string& error() const { return error_; }
  // What a PyTorchStreamReader of the archive reads through (pread at the archive's offset).
  std::shared_ptr<caffe2::serialize::ReadAdapterInterface> adapter() const { return adapter_; }

  // Marks the archive's data/ records of at least 64 KiB as mappable; returns how many.
  size_t mark_records(caffe2::serialize::PyTorchStreamReader& reader);

  // Runs `unpickle` (which reads the archive through adapter() and returns what it built), with
  // the marked records' storages made views of a private mapping of the file, and returns its
  // result. Without marked records, or when the file cannot be mapped, `unpickle` runs as usual.
  c10::IValue load(const std::function<c10::IValue()>& unpickle, MappedLoadStats& stats);

 private:
  std::string path_, error_;
  int fd_ = -1;
  uint64_t offset_ = 0, size_ = 0;
  std::shared_ptr<caffe2::serialize::ReadAdapterInterface> adapter_;
  std::unordered_map<uint64_t, uint64_t> records_;  // data offset in the archive -> size
  std::unordered_map<uint64_t, uint32_t> crcs_;     // data offset -> CRC-32 (central directory)
};

// True when the bytes [p, p + n) of a MAP_PRIVATE mapping of a file are still the file's: no
// page they are on was written since it was mapped (Note [Unwritten pages of a private mapping]).
// False when that cannot be proven (no /proc/self/pagemap).
bool private_pages_unwritten(const void* p, size_t n);

// Where the bytes of an input record are, and their CRC-32 (from the archive's central directory).
struct RecordSource {
  int fd = -1;  // open while the storage viewing the record lives
  uint64_t offset = 0;
  uint32_t crc = 0;
};

// The input record that [data, data + size) is an unchanged view of: a storage MappedArchive::load
// pointed at the record's bytes, still exactly the record, none of its pages written (Note
// [Unchanged records]); nullopt when that is not proven.
std::optional<RecordSource> unchanged_record(const void* data, uint64_t size);

}  // namespace tt
