// MappedArchive (Note [Weights mapped from the archive], lib/loaders/mapped_records.cpp): a
// torch.save zip at an offset of a file, as a .pt2 holds its state dict, loads with its storages
// mapped (directly when the records are aligned, through an aligned copy when not), holds the
// saved values, and a write into a loaded tensor never reaches the file.
#include "loaders/mapped_records.h"

#include <ATen/ATen.h>
#include <doctest/doctest.h>
#include <torch/csrc/jit/serialization/import_read.h>
#include <torch/csrc/jit/serialization/pickle.h>

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
    // Copy-on-write: the loaded tensor changes, the file does not.
    lw.mul_(2);
    CHECK(at::equal(lw, w * 2));
    std::ifstream in(path, std::ios::binary);
    std::string after((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    CHECK(after == bytes);
  }
  std::filesystem::remove_all(dir);
}
