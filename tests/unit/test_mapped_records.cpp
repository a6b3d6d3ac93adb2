// MappedArchive (Note [Weights mapped from the archive], lib/loaders/mapped_records.cpp): a
// torch.save zip at an offset of a file, as a .pt2 holds its state dict, loads with its storages
// mapped (directly when the records are aligned, through an aligned copy when not), holds the
// saved values, and a write into a loaded tensor never reaches the file; private_pages_unwritten
// (Note [Unwritten pages of a private mapping]) tells written pages from the file's, so NAME.pth
// copies a record from the input only while it is unchanged (Note [Unchanged records]).
#include "loaders/mapped_records.h"
#include "loaders/torch_io.h"

#include <ATen/ATen.h>
#include <doctest/doctest.h>
#include <torch/csrc/jit/serialization/import_read.h>
#include <torch/csrc/jit/serialization/pickle.h>

#include <fcntl.h>
#include <sys/mman.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

namespace {

// {"w": 64 Ki floats (256 KiB: mapped), "b": 16 floats (copied)} saved by torch::pickle_save (the
// zip torch.save writes), after `prefix` bytes of something else.
std::string write_archive(const std::string& path, size_t prefix, at::Tensor& w, at::Tensor& b) {
  w = at::arange(65536, at::kFloat);
  b = at::arange(16, at::kFloat) * 0.5;
  c10::Dict<std::string, at::Tensor> d;
  d.insert("w", w);
  d.insert("b", b);
  std::vector<char> zip = torch::jit::pickle_save(c10::IValue(d));
  std::string bytes(prefix, 'x');
  bytes.append(zip.begin(), zip.end());
  std::ofstream(path, std::ios::binary).write(bytes.data(), std::streamsize(bytes.size()));
  return bytes;
}

std::string read_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return std::string((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
}

c10::Dict<c10::IValue, c10::IValue> load(tt::MappedArchive& archive, tt::MappedLoadStats& st) {
  caffe2::serialize::PyTorchStreamReader reader(archive.adapter());
  CHECK(archive.mark_records(reader) == 1);
  c10::IValue v = archive.load(
      [&] {
        return torch::jit::readArchiveAndTensors("data", "", "", std::nullopt, std::nullopt,
                                                 c10::Device(c10::kCPU), reader);
      },
      st);
  return v.toGenericDict();
}

}  // namespace

TEST_CASE("mapped records: a torch.save zip at an offset of a file") {
  std::string dir =
      (std::filesystem::temp_directory_path() / ("tt_mapped_" + std::to_string(::getpid())))
          .string();
  std::filesystem::create_directories(dir);
  // 128: aligned in the file, mapped as it is; 22: misaligned for float, mapped through a copy.
  for (size_t prefix : {size_t(128), size_t(22)}) {
    CAPTURE(prefix);
    std::string path = dir + "/a.bin";
    at::Tensor w, b;
    std::string bytes = write_archive(path, prefix, w, b);
    tt::MappedArchive archive(path, prefix, bytes.size() - prefix);
    REQUIRE(archive.error().empty());
    tt::MappedLoadStats st;
    auto d = load(archive, st);
    CHECK(st.mapped);
    CHECK(st.records == 1);
    CHECK(st.bytes == 65536 * 4);
    CHECK(st.filled == 0);
    CHECK(st.realigned == (prefix % 64 != 0));
    at::Tensor lw = d.at("w").toTensor(), lb = d.at("b").toTensor();
    CHECK(at::equal(lw, w));
    CHECK(at::equal(lb, b));
    CHECK(reinterpret_cast<uintptr_t>(lw.data_ptr()) % 4 == 0);
    // Note [Unchanged records]: NAME.pth copies the record from the file with the central
    // directory's CRC, byte for byte what writing the same values gives.
    auto saved = [&](const at::Tensor& t) {
      tt::save_tensor_dict(dir + "/o.pth", {{"w", t}, {"b", lb}});
      return read_file(dir + "/o.pth");
    };
    CHECK(tt::private_pages_unwritten(lw.data_ptr(), lw.nbytes()));
    CHECK(tt::unchanged_record(lw.data_ptr(), lw.nbytes()).has_value());
    CHECK_FALSE(tt::unchanged_record(lw.data_ptr(), lw.nbytes() - 4).has_value());
    CHECK_FALSE(tt::unchanged_record(lb.data_ptr(), lb.nbytes()).has_value());  // copied in
    std::string copied = saved(lw);
    CHECK(copied == saved(lw.clone()));
    // Copy-on-write: the loaded tensor changes, the file does not; the write is detected and
    // NAME.pth gets the new values.
    lw.mul_(2);
    CHECK(at::equal(lw, w * 2));
    CHECK_FALSE(tt::private_pages_unwritten(lw.data_ptr(), lw.nbytes()));
    CHECK_FALSE(tt::unchanged_record(lw.data_ptr(), lw.nbytes()).has_value());
    std::string written = saved(lw);
    CHECK(written == saved(lw.clone()));
    CHECK(written != copied);
    CHECK(read_file(path) == bytes);
  }
  std::filesystem::remove_all(dir);
}

TEST_CASE("mapped records: a written page of a private mapping is detected") {
  const size_t page = size_t(::sysconf(_SC_PAGESIZE));
  std::string path =
      (std::filesystem::temp_directory_path() / ("tt_pages_" + std::to_string(::getpid()) + ".bin"))
          .string();
  std::string bytes(4 * page, '\0');
  for (size_t i = 0; i < bytes.size(); ++i) bytes[i] = char(i * 7);
  std::ofstream(path, std::ios::binary).write(bytes.data(), std::streamsize(bytes.size()));
  int fd = ::open(path.c_str(), O_RDONLY);
  REQUIRE(fd >= 0);
  void* m = ::mmap(nullptr, bytes.size(), PROT_READ | PROT_WRITE, MAP_PRIVATE, fd, 0);
  ::close(fd);
  REQUIRE(m != MAP_FAILED);
  auto* p = static_cast<volatile char*>(m);
  auto* base = static_cast<char*>(m);
  CHECK(tt::private_pages_unwritten(base, bytes.size()));  // not touched yet
  unsigned sum = 0;
  for (size_t i = 0; i < bytes.size(); i += 64) sum += unsigned(p[i]);
  CHECK(sum > 0);
  CHECK(tt::private_pages_unwritten(base, bytes.size()));  // read: still the file's pages
  p[2 * page + 5] = p[2 * page + 5];                       // the same value: still a write
  CHECK_FALSE(tt::private_pages_unwritten(base, bytes.size()));
  CHECK_FALSE(tt::private_pages_unwritten(base + 2 * page + 100, 10));  // another byte, same page
  CHECK_FALSE(tt::private_pages_unwritten(base + page + 1, page));      // ends on the page
  CHECK(tt::private_pages_unwritten(base, 2 * page));
  CHECK(tt::private_pages_unwritten(base + 3 * page, page));
  ::munmap(m, bytes.size());
  std::filesystem::remove(path);
}
