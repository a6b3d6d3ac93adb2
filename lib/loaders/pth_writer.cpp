// NAME.pth written straight from the tensors' storages.
//
// Note [Writing NAME.pth]
// torch.save's format is a zip of stored records (archive/data.pkl, archive/data/0, ...,
// archive/version) whose data start at 64-byte boundaries (kFieldAlignment: torch.load(mmap=True)
// maps them in place). PyTorchStreamWriter (miniz) writes it through a callback, computing each
// record's CRC-32 before the first byte of it is written. Here the record's data goes to the file
// in one write(2) from the storage itself while a second thread computes its CRC-32 (zlib's) over
// the same memory; the CRC is then patched into the local header (pwrite of 4 bytes) and written
// into the central directory. So the weights cost one pass of the write and, on the other core,
// one pass of the CRC, with no intermediate buffer. The layout is PyTorchStreamWriter's: a local
// header with a ZIP64 extra field when the size or the offset does not fit 32 bits, then an "FB"
// extra field padding the data to 64 bytes; the central directory; ZIP64 end records when needed.
// A storage that is an input record's unchanged bytes is copied from the input file instead, with
// the CRC-32 of the input's central directory (Note [Unchanged records] in mapped_records.cpp).
#include "loaders/pth_writer.h"

#include "loaders/mapped_records.h"
#include "support/diag.h"
#include "support/output_set.h"

#include <fcntl.h>
#include <unistd.h>
#include <spdlog/spdlog.h>
#include <zlib.h>

#include <cerrno>
#include <future>

namespace tt {
namespace {

constexpr uint64_t kAlign = 64;  // caffe2::serialize::kFieldAlignment
constexpr uint64_t k32 = 0xffffffffu;

void put16(std::string& b, uint16_t v) {
  b += char(v & 0xff);
  b += char(v >> 8);
}
void put32(std::string& b, uint32_t v) {
  put16(b, uint16_t(v & 0xffff));
  put16(b, uint16_t(v >> 16));
}
void put64(std::string& b, uint64_t v) {
  put32(b, uint32_t(v & k32));
  put32(b, uint32_t(v >> 32));
}

uint32_t crc32_of(const void* data, uint64_t size) {
  const auto* p = static_cast<const Bytef*>(data);
  uLong crc = crc32_z(0L, Z_NULL, 0);
  return uint32_t(crc32_z(crc, p, size_t(size)));
}

}  // namespace

PthWriter::PthWriter(const std::string& path, const std::string& shown) : shown_(shown) {
  fd_ = ::open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (fd_ < 0) throw output_error(shown, errno);
}

PthWriter::~PthWriter() {
  if (fd_ >= 0) ::close(fd_);
}

void PthWriter::fail() { throw output_error(shown_, errno); }

void PthWriter::write_all(const void* data, uint64_t size) {
  const char* p = static_cast<const char*>(data);
  while (size > 0) {
    // Linux writes at most 0x7ffff000 bytes per call.
    ssize_t n = ::write(fd_, p, size_t(std::min<uint64_t>(size, uint64_t(1) << 30)));
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) fail();
    p += n;
    size -= uint64_t(n);
    pos_ += uint64_t(n);
  }
}

void PthWriter::pwrite_all(const void* data, uint64_t size, uint64_t offset) {
  const char* p = static_cast<const char*>(data);
  while (size > 0) {
    ssize_t n = ::pwrite(fd_, p, size_t(size), off_t(offset));
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) fail();
    p += n;
    size -= uint64_t(n);
    offset += uint64_t(n);
  }
}

void PthWriter::copy_record(const RecordSource& src, const void* data, uint64_t size) {
  uint64_t done = 0;
  while (done < size) {
    loff_t in = loff_t(src.offset + done);
    ssize_t n = ::copy_file_range(src.fd, &in, fd_, nullptr,
                                  size_t(std::min<uint64_t>(size - done, uint64_t(1) << 30)), 0);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) break;  // EXDEV, ENOSYS, EINVAL, ..., or short: the rest is written
    done += uint64_t(n);
    pos_ += uint64_t(n);
  }
  write_all(static_cast<const char*>(data) + done, size - done);
  copied_ += 1;
  copied_bytes_ += size;
}

void PthWriter::add(const std::string& name, const void* data, uint64_t size) {
  Entry e{name, pos_, size, 0};
  // An input record's bytes, unchanged: copied from the input file, with its CRC (Note
  // [Unchanged records] in mapped_records.cpp).
  std::optional<RecordSource> source = unchanged_record(data, size);
  // Large records: the CRC runs on the other core while this one writes the same bytes.
  std::future<uint32_t> crc;
  if (source)
    e.crc = source->crc;
  else if (size >= (uint64_t(1) << 20))
    crc = std::async(std::launch::async, [data, size] { return crc32_of(data, size); });
  else
    e.crc = crc32_of(data, size);
  const bool zip64 = size >= k32 || pos_ >= k32;
  std::string h;
  put32(h, 0x04034b50);
  put16(h, zip64 ? 45 : 20);  // version needed to extract
  put16(h, 0);                // flags
  put16(h, 0);                // method: stored
  put16(h, 0);                // time
  put16(h, 0x21);             // date: 1980-01-01
  put32(h, e.crc);            // patched below for large records
  put32(h, zip64 ? uint32_t(k32) : uint32_t(size));
  put32(h, zip64 ? uint32_t(k32) : uint32_t(size));
  put16(h, uint16_t(name.size()));
  const size_t extra_len_at = h.size();
  put16(h, 0);
  h += name;
  std::string extra;
  if (zip64) {
    put16(extra, 0x0001);
    put16(extra, 16);
    put64(extra, size);
    put64(extra, size);
  }
  // The "FB" padding field: its 4-byte header, then filler up to the next 64-byte boundary.
  uint64_t start = pos_ + h.size() + extra.size() + 4;
  uint64_t pad = (kAlign - start % kAlign) % kAlign;
  put16(extra, 0x4246);  // "FB"
  put16(extra, uint16_t(pad));
  extra.append(size_t(pad), 'Z');
  h[extra_len_at] = char(extra.size() & 0xff);
  h[extra_len_at + 1] = char(extra.size() >> 8);
  h += extra;
  write_all(h.data(), h.size());
  if (source)
    copy_record(*source, data, size);
  else
    write_all(data, size);
  if (crc.valid()) {
    e.crc = crc.get();
    std::string c;
    put32(c, e.crc);
    pwrite_all(c.data(), c.size(), e.header_offset + 14);
  }
  entries_.push_back(std::move(e));
}

void PthWriter::finish() {
  const uint64_t cd_offset = pos_;
  std::string cd;
  for (const Entry& e : entries_) {
    const bool big_size = e.size >= k32, big_offset = e.header_offset >= k32;
    std::string extra;
    if (big_size || big_offset) {
      put16(extra, 0x0001);
      put16(extra, uint16_t((big_size ? 16 : 0) + (big_offset ? 8 : 0)));
      if (big_size) {
        put64(extra, e.size);
        put64(extra, e.size);
      }
      if (big_offset) put64(extra, e.header_offset);
    }
    const uint16_t version = (big_size || big_offset) ? 45 : 20;
    put32(cd, 0x02014b50);
    put16(cd, version);  // made by
    put16(cd, version);  // needed to extract
    put16(cd, 0);
    put16(cd, 0);
    put16(cd, 0);
    put16(cd, 0x21);
    put32(cd, e.crc);
    put32(cd, big_size ? uint32_t(k32) : uint32_t(e.size));
    put32(cd, big_size ? uint32_t(k32) : uint32_t(e.size));
    put16(cd, uint16_t(e.name.size()));
    put16(cd, uint16_t(extra.size()));
    put16(cd, 0);  // comment
    put16(cd, 0);  // disk
    put16(cd, 0);  // internal attributes
    put32(cd, 0);  // external attributes
    put32(cd, big_offset ? uint32_t(k32) : uint32_t(e.header_offset));
    cd += e.name;
    cd += extra;
  }
  const uint64_t cd_size = cd.size(), count = entries_.size();
  if (count >= 0xffff || cd_offset >= k32 || cd_size >= k32) {
    const uint64_t eocd64 = cd_offset + cd_size;
    put32(cd, 0x06064b50);
    put64(cd, 44);
    put16(cd, 45);
    put16(cd, 45);
    put32(cd, 0);
    put32(cd, 0);
    put64(cd, count);
    put64(cd, count);
    put64(cd, cd_size);
    put64(cd, cd_offset);
    put32(cd, 0x07064b50);
    put32(cd, 0);
    put64(cd, eocd64);
    put32(cd, 1);
  }
  put32(cd, 0x06054b50);
  put16(cd, 0);
  put16(cd, 0);
  put16(cd, uint16_t(std::min<uint64_t>(count, 0xffff)));
  put16(cd, uint16_t(std::min<uint64_t>(count, 0xffff)));
  put32(cd, uint32_t(std::min<uint64_t>(cd_size, k32)));
  put32(cd, uint32_t(std::min<uint64_t>(cd_offset, k32)));
  put16(cd, 0);
  write_all(cd.data(), cd.size());
  if (copied_ > 0)
    spdlog::debug("{}: {} records ({} MiB) copied unchanged from the input", shown_, copied_,
                  copied_bytes_ >> 20);
  const int fd = fd_;
  fd_ = -1;
  if (::close(fd) != 0) fail();
}

}  // namespace tt
