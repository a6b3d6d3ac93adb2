// NAME.pth written straight from the tensors' storages (Note [Writing NAME.pth]).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace tt {

struct RecordSource;  // mapped_records.h

// A zip archive of stored (uncompressed) records in the layout PyTorch's PyTorchStreamWriter
// uses (every record's data 64-byte aligned, ZIP64 where sizes or offsets need it), written with
// one write(2) per record's data and no intermediate buffer.
class PthWriter {
 public:
  // Creates (truncates) `path`; `shown` names it in errors. Throws tt::Error(Usage).
  PthWriter(const std::string& path, const std::string& shown);
  ~PthWriter();
  PthWriter(const PthWriter&) = delete;
  PthWriter& operator=(const PthWriter&) = delete;

  // Appends record `name` holding [data, data + size).
  void add(const std::string& name, const void* data, uint64_t size);
  // Writes the central directory and closes the file. Throws tt::Error(Usage) on I/O failure.
  void finish();

 private:
  struct Entry {
    std::string name;
    uint64_t header_offset = 0;
    uint64_t size = 0;
    uint32_t crc = 0;
  };
  void write_all(const void* data, uint64_t size);
  // The record's bytes from the input file (copy_file_range; write from `data` where it cannot).
  void copy_record(const RecordSource& src, const void* data, uint64_t size);
  void pwrite_all(const void* data, uint64_t size, uint64_t offset);
  [[noreturn]] void fail();

  int fd_ = -1;
  std::string shown_;
  uint64_t pos_ = 0;
  std::vector<Entry> entries_;
  size_t copied_ = 0;  // records copied from the input (for the log)
  uint64_t copied_bytes_ = 0;
};

}  // namespace tt
