// Model loading front door: checks the path, detects the format from the content, recognises
// the common wrong files (state_dicts, pickled modules, truncated archives) before LibTorch sees
// them, dispatches to the TorchScript / ONNX / .tir loaders and runs the loader's import
// pipeline (Note [Import pipeline] in loader.h).
#include "loaders/loader.h"

#include "loaders/jit_builtins.h"
#include "loaders/tir_parser.h"
#include "passes/pass_manager.h"
#include "support/phase_timer.h"
#include <fcntl.h>
#include <openssl/evp.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <fstream>
#include <limits>
#include <optional>
#include <future>
#include <sstream>

namespace tt {
namespace {

// Note [Source hash]
// The report's source sha256 is OpenSSL's (libcrypto: SHA extensions / AVX2 where the CPU has
// them, about 4x a portable implementation). load_model runs it on a second thread while the
// loader reads the same file, so it is off the critical path; it streams the file through one
// 1 MiB buffer (bounded memory, no whole-file copy) with a sequential-read hint.
std::string sha256_file(const std::string& path) {
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0)
    throw Error(ExitCode::BadInput, std::string("cannot open the file (") + std::strerror(errno) +
                                        ") — check the path and its permissions");
  std::unique_ptr<int, void (*)(int*)> closer(new int(fd), [](int* f) {
    ::close(*f);
    delete f;
  });
  ::posix_fadvise(fd, 0, 0, POSIX_FADV_SEQUENTIAL);
  std::unique_ptr<EVP_MD_CTX, void (*)(EVP_MD_CTX*)> ctx(EVP_MD_CTX_new(), EVP_MD_CTX_free);
  TT_ASSERT(ctx && EVP_DigestInit_ex(ctx.get(), EVP_sha256(), nullptr) == 1);
  std::vector<unsigned char> buf(size_t(1) << 20);
  for (;;) {
    ssize_t n = ::read(fd, buf.data(), buf.size());
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) throw Error(ExitCode::BadInput, "read error — check the file and the disk");
    if (n == 0) break;
    TT_ASSERT(EVP_DigestUpdate(ctx.get(), buf.data(), size_t(n)) == 1);
  }
  unsigned char md[EVP_MAX_MD_SIZE];
  unsigned int len = 0;
  TT_ASSERT(EVP_DigestFinal_ex(ctx.get(), md, &len) == 1);
  static const char kHex[] = "0123456789abcdef";
  std::string hex;
  for (unsigned int i = 0; i < len; ++i) {
    hex += kHex[md[i] >> 4];
    hex += kHex[md[i] & 15];
  }
  return hex;
}

std::string read_all(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in)
    throw Error(ExitCode::BadInput, std::string("cannot open the file (") + std::strerror(errno) +
                                        ") — check the path and its permissions");
  std::ostringstream os;
  os << in.rdbuf();
  if (in.bad()) throw Error(ExitCode::BadInput, "read error — check the file and the disk");
  return os.str();
}

uint32_t le32(const std::string& b, size_t at) {
  return uint32_t(uint8_t(b[at])) | uint32_t(uint8_t(b[at + 1])) << 8 |
         uint32_t(uint8_t(b[at + 2])) << 16 | uint32_t(uint8_t(b[at + 3])) << 24;
}
uint16_t le16(const std::string& b, size_t at) {
  return uint16_t(uint8_t(b[at]) | uint8_t(b[at + 1]) << 8);
}

struct ZipEntry {
  std::string name;
  uint64_t local_offset = 0;
  uint64_t compressed_size = 0;
  uint32_t crc = 0;
  uint16_t method = 0;
};

uint64_t le64(const std::string& b, size_t at) {
  return uint64_t(le32(b, at)) | uint64_t(le32(b, at + 4)) << 32;
}

// Reads byte ranges of a file with seeks: the zip checks below look at the end of the archive
// (its central directory) and at most one small entry, never the whole (often 100 MB) file.
class RangeReader {
 public:
  // The file, or its bytes [base, base + size).
  explicit RangeReader(const std::string& path, uint64_t base = 0,
                       uint64_t size = std::numeric_limits<uint64_t>::max())
      : in_(path, std::ios::binary), base_(base) {
    if (!in_)
      throw Error(ExitCode::BadInput, std::string("cannot open the file (") + std::strerror(errno) +
                                          ") — check the path and its permissions");
    in_.seekg(0, std::ios::end);
    uint64_t file = static_cast<uint64_t>(in_.tellg());
    size_ = base > file ? 0 : std::min(size, file - base);
  }
  uint64_t size() const { return size_; }
  // Bytes [off, off + n) clipped to the file; a read error is a BadInput error.
  std::string at(uint64_t off, uint64_t n) {
    if (off >= size_) return "";
    n = std::min(n, size_ - off);
    std::string b(static_cast<size_t>(n), '\0');
    in_.clear();
    in_.seekg(static_cast<std::streamoff>(base_ + off));
    in_.read(&b[0], static_cast<std::streamsize>(n));
    if (static_cast<uint64_t>(in_.gcount()) != n)
      throw Error(ExitCode::BadInput, "read error — check the file and the disk");
    return b;
  }

 private:
  std::ifstream in_;
  uint64_t base_ = 0, size_ = 0;
};

// Note [ZIP64]
// An archive over 4 GiB, or with over 65535 entries, keeps the numbers that do not fit the zip's
// 16- and 32-bit fields in ZIP64 records (APPNOTE 4.3.14-4.3.15, 4.5.3); PyTorch's writer (miniz),
// Python's zipfile and NAME.pth's writer all write them when a number overflows:
// - the end of central directory record (EOCD) holds 0xffff / 0xffffffff in the overflowing
//   fields and is preceded by a 20-byte ZIP64 locator (signature 0x07064b50) that gives the
//   offset of the ZIP64 EOCD record (signature 0x06064b50), whose 64-bit entry count, directory
//   size and directory offset are then the archive's (a locator is used whenever it is there);
// - a central directory entry whose uncompressed size, compressed size or local header offset is
//   0xffffffff (or disk number 0xffff) has an extra field of id 0x0001 holding, as 64-bit values
//   (the disk number: 32 bits), exactly those fields, in that order;
// - a local header may have the same extra field; the data start after the local header's own
//   name and extra field, whatever the central directory's lengths are.
// Every offset and size is checked against the file before it is used (no arithmetic that can
// wrap), so a damaged ZIP64 record is one "corrupt zip archive (why)" error, never a read outside
// the file.

// The ZIP64 end record that the locator just before the EOCD at `eocd` points to: the directory's
// entry count, size and offset, and where it must end (the ZIP64 end record). "" or why not.
std::string read_zip64_end(RangeReader& f, uint64_t eocd, uint64_t& count, uint64_t& cd_size,
                           uint64_t& cd_off, uint64_t& cd_end) {
  const std::string loc = f.at(eocd - 20, 20);
  const uint64_t at = le64(loc, 8);
  if (at > eocd - 20 || eocd - 20 - at < 56)
    return "the ZIP64 end-of-central-directory locator points outside the archive";
  const std::string end = f.at(at, 56);
  if (le32(end, 0) != 0x06064b50)
    return "no ZIP64 end-of-central-directory record where its locator points";
  if (le32(end, 16) != 0 || le32(end, 20) != 0 || le64(end, 24) != le64(end, 32))
    return "a multi-disk ZIP64 archive";
  count = le64(end, 32);
  cd_size = le64(end, 40);
  cd_off = le64(end, 48);
  cd_end = at;
  return "";
}

// The fields of a central directory entry that are 0xffffffff (0xffff), from its ZIP64 extra
// field (Note [ZIP64]). "" or why the extra field is malformed.
std::string read_zip64_extra(const std::string& extra, uint64_t& size, uint64_t& csize,
                             uint64_t& offset, uint16_t disk, bool wide_size, bool wide_csize,
                             bool wide_offset) {
  for (size_t q = 0; q + 4 <= extra.size();) {
    const uint16_t id = le16(extra, q), len = le16(extra, q + 2);
    if (extra.size() - q - 4 < len) return "an extra field runs past its entry";
    if (id == 0x0001) {
      const size_t need = 8 * (wide_size + wide_csize + wide_offset) + 4 * (disk == 0xffff);
      if (len < need) return "a ZIP64 extra field is shorter than the fields it must hold";
      size_t r = q + 4;
      if (wide_size) size = le64(extra, r), r += 8;
      if (wide_csize) csize = le64(extra, r), r += 8;
      if (wide_offset) offset = le64(extra, r);
      return "";
    }
    q += 4 + size_t(len);
  }
  return "an entry's size or offset is 0xffffffff with no ZIP64 extra field";
}

// Reads the central directory, ZIP64 or not. Returns "" or, when the archive is truncated or
// corrupt, why.
std::string read_zip_directory(RangeReader& f, std::vector<ZipEntry>& out) {
  const uint64_t size = f.size();
  const char* no_directory = "no valid central directory";
  if (size < 22) return no_directory;
  // The end-of-central-directory record: in the last 22 + 65535 (comment) bytes.
  const uint64_t tail_off = size > 22 + 65535 ? size - 22 - 65535 : 0;
  const std::string tail = f.at(tail_off, size - tail_off);
  size_t eocd = std::string::npos;
  for (size_t i = tail.size() - 22 + 1; i-- > 0;)
    if (le32(tail, i) == 0x06054b50) {
      eocd = i;
      break;
    }
  if (eocd == std::string::npos) return no_directory;
  uint64_t count = le16(tail, eocd + 10);
  uint64_t cd_size = le32(tail, eocd + 12);
  uint64_t cd_off = le32(tail, eocd + 16);
  uint64_t cd_end = tail_off + eocd;  // the directory ends before this
  const bool locator =
      tail_off + eocd >= 20 && le32(f.at(tail_off + eocd - 20, 4), 0) == 0x07064b50;
  if (locator) {
    std::string why = read_zip64_end(f, tail_off + eocd, count, cd_size, cd_off, cd_end);
    if (!why.empty()) return why;
  }
  // (Without a locator, 0xffff entries or a directory at 0xffffffff are taken as they are: miniz
  // writes 65535 entries without ZIP64 records.)
  if (cd_off > cd_end || cd_size > cd_end - cd_off)
    return !locator && (cd_size == 0xffffffff || cd_off == 0xffffffff)
               ? "a ZIP64 archive without its ZIP64 end-of-central-directory locator"
               : no_directory;
  const std::string cd = f.at(cd_off, cd_size);
  size_t p = 0;
  for (uint64_t i = 0; i < count; ++i) {
    if (p + 46 > cd.size() || le32(cd, p) != 0x02014b50) return no_directory;
    ZipEntry e;
    e.method = le16(cd, p + 10);
    e.crc = le32(cd, p + 16);
    e.compressed_size = le32(cd, p + 20);
    uint64_t uncompressed = le32(cd, p + 24);
    uint16_t n = le16(cd, p + 28), extra = le16(cd, p + 30), comment = le16(cd, p + 32);
    const uint16_t disk = le16(cd, p + 34);
    e.local_offset = le32(cd, p + 42);
    if (cd.size() - p - 46 < size_t(n) + extra) return no_directory;
    e.name = cd.substr(p + 46, n);
    const bool wide_size = uncompressed == 0xffffffff, wide_csize = e.compressed_size == 0xffffffff,
               wide_offset = e.local_offset == 0xffffffff;
    if (wide_size || wide_csize || wide_offset || disk == 0xffff) {
      std::string why =
          read_zip64_extra(cd.substr(p + 46 + n, extra), uncompressed, e.compressed_size,
                           e.local_offset, disk, wide_size, wide_csize, wide_offset);
      if (!why.empty()) return why + " (" + e.name + ")";
    }
    if (e.local_offset > size || size - e.local_offset < 30) return no_directory;
    out.push_back(std::move(e));
    p += 46 + size_t(n) + extra + comment;
  }
  return "";
}

// Where the stored (uncompressed) bytes of an entry start; nullopt when compressed or out of range.
std::optional<uint64_t> zip_entry_offset(RangeReader& f, const ZipEntry& e) {
  if (e.method != 0) return std::nullopt;
  std::string local = f.at(e.local_offset, 30);
  if (local.size() < 30 || le32(local, 0) != 0x04034b50) return std::nullopt;
  uint64_t data = e.local_offset + 30 + le16(local, 26) + le16(local, 28);
  if (data > f.size() || e.compressed_size > f.size() - data) return std::nullopt;
  return data;
}

// The stored (uncompressed) bytes of an entry; "" when compressed or out of range.
std::string zip_entry_bytes(RangeReader& f, const ZipEntry& e) {
  std::optional<uint64_t> data = zip_entry_offset(f, e);
  return data ? f.at(*data, e.compressed_size) : "";
}

[[noreturn]] void corrupt_zip(const std::string& why) {
  throw Error(ExitCode::BadInput, "truncated or corrupt zip archive (" + why +
                                      ") — the file was cut short or damaged; re-export or "
                                      "re-copy it");
}

const char* kSaveHint =
    "save a TorchScript model with torch.jit.trace(model.eval(), example).save(path) "
    "or torch.jit.script(model).save(path)";

// Recognises zips that are PyTorch files but not TorchScript, with a message that says which.
void check_torchscript_zip(const std::string& path) {
  RangeReader f(path);
  std::vector<ZipEntry> entries;
  if (std::string why = read_zip_directory(f, entries); !why.empty()) corrupt_zip(why);
  bool has_code = false, has_constants = false;
  const ZipEntry* data_pkl = nullptr;
  for (const auto& e : entries) {
    auto slash = e.name.find('/');
    std::string rest = slash == std::string::npos ? e.name : e.name.substr(slash + 1);
    if (rest.rfind("code/", 0) == 0) has_code = true;
    if (rest == "constants.pkl") has_constants = true;
    if (rest == "data.pkl") data_pkl = &e;
  }
  if (has_code && has_constants) return;
  if (data_pkl) {
    std::string pkl = zip_entry_bytes(f, *data_pkl);
    // A torch.save'd state_dict pickles an OrderedDict (or dict) of tensors; a pickled module
    // refers to its class and torch.nn.
    bool is_dict = pkl.find("collections\nOrderedDict") != std::string::npos ||
                   (pkl.size() > 2 &&
                    (pkl[2] == '}' || pkl.find("torch._utils\n_rebuild") != std::string::npos));
    bool is_module = pkl.find("torch.nn.modules") != std::string::npos ||
                     pkl.find("_modules") != std::string::npos;
    if (is_module)
      throw Error(ExitCode::BadInput,
                  std::string("this is a pickled nn.Module written by torch.save(model), not a "
                              "TorchScript archive — ") +
                      kSaveHint);
    if (is_dict)
      throw Error(
          ExitCode::BadInput,
          std::string("this is a state_dict (or other tensors) written by torch.save, not a "
                      "TorchScript model: it has weights but no code — ") +
              kSaveHint);
    throw Error(ExitCode::BadInput,
                std::string("this is a file written by torch.save, not a TorchScript archive — ") +
                    kSaveHint);
  }
  throw Error(ExitCode::BadInput,
              "zip archive that is not a PyTorch model (no code/ or data.pkl inside) — expected a "
              "TorchScript archive (.pt), an ONNX file (.onnx) or .tir text");
}

// A zip holding a torch.export program: serialized_exported_program.json (torch 2.6's
// torch.export.save) or archive_format (the package layout of torch >= 2.7), at the top or under
// one top-level folder. Never throws: a corrupt zip is left for the TorchScript checks to judge.
bool is_export_zip(const std::string& path) {
  try {
    RangeReader f(path);
    std::vector<ZipEntry> entries;
    if (!read_zip_directory(f, entries).empty()) return false;
    for (const auto& e : entries) {
      auto slash = e.name.find('/');
      std::string rest = slash == std::string::npos ? e.name : e.name.substr(slash + 1);
      for (const char* marker : {"serialized_exported_program.json", "archive_format"})
        if (e.name == marker || rest == marker) return true;
    }
  } catch (const std::exception&) {
  }
  return false;
}

bool looks_like_tir(const std::string& b) {
  size_t i = 0;
  while (i < b.size()) {
    while (i < b.size() && std::isspace(static_cast<unsigned char>(b[i]))) ++i;
    if (b.compare(i, 2, "//") == 0) {
      i = b.find('\n', i);
      if (i == std::string::npos) return false;
      continue;
    }
    return b.compare(i, 7, "graph @") == 0;
  }
  return false;
}

// ONNX ModelProto starts with field 1 (ir_version, varint: tag 0x08) in every exporter we know
// of, and names the "onnx" domain or an opset import near the start.
bool looks_like_onnx(const std::string& b) {
  if (b.size() < 8 || uint8_t(b[0]) != 0x08) return false;
  if (uint8_t(b[1]) == 0 || uint8_t(b[1]) > 20) return false;  // ir_version 1..20
  return true;
}

}  // namespace

ZipContents read_zip(const std::string& path, const std::function<bool(const std::string&)>& want,
                     const std::function<bool(const std::string&)>& locate) {
  RangeReader f(path);
  std::vector<ZipEntry> entries;
  if (std::string why = read_zip_directory(f, entries); !why.empty()) corrupt_zip(why);
  ZipContents out;
  for (const auto& e : entries) {
    out.names.push_back(e.name);
    bool wanted = want(e.name), located = !wanted && locate && locate(e.name);
    if (!wanted && !located) continue;
    if (e.method != 0)
      throw Error(ExitCode::BadInput,
                  "zip entry " + e.name + " is compressed (method " + std::to_string(e.method) +
                      "); PyTorch writes entries uncompressed — re-save the file with PyTorch");
    // Where the bytes are (also for an empty entry: its local header is checked the same way).
    std::optional<uint64_t> at = zip_entry_offset(f, e);
    if (!at)
      throw Error(ExitCode::BadInput,
                  "zip entry " + e.name + " is truncated or corrupt — re-save the file");
    if (located) {
      out.ranges[e.name] = {*at, e.compressed_size};
      continue;
    }
    out.data[e.name] = f.at(*at, e.compressed_size);
  }
  return out;
}

std::vector<ZipRecord> zip_records(const std::string& path, uint64_t offset, uint64_t size) {
  std::vector<ZipRecord> out;
  try {
    RangeReader f(path, offset, size);
    std::vector<ZipEntry> entries;
    if (!read_zip_directory(f, entries).empty()) return {};
    for (const ZipEntry& e : entries)
      if (std::optional<uint64_t> at = zip_entry_offset(f, e))
        out.push_back(ZipRecord{e.name, *at, e.compressed_size, e.crc});
  } catch (const std::exception&) {
    return {};
  }
  return out;
}

std::string detect_format(const std::string& path) {
  struct stat st {};
  if (::stat(path.c_str(), &st) != 0) {
    if (errno == ENOENT) throw Error(ExitCode::BadInput, "no such file — check the path");
    throw Error(ExitCode::BadInput, std::string("cannot access the file (") + std::strerror(errno) +
                                        ") — check the path and its permissions");
  }
  if (S_ISDIR(st.st_mode))
    throw Error(ExitCode::BadInput,
                "is a directory, not a model file — pass the .pt/.onnx/.tir file inside it");
  if (!S_ISREG(st.st_mode))
    throw Error(ExitCode::BadInput, "not a regular file — pass a model file (.pt, .onnx or .tir)");
  if (st.st_size == 0) throw Error(ExitCode::BadInput, "the file is empty — re-export the model");
  std::ifstream in(path, std::ios::binary);
  if (!in)
    throw Error(ExitCode::BadInput, std::string("cannot open the file (") + std::strerror(errno) +
                                        ") — check its permissions");
  std::string head(4096, '\0');
  in.read(&head[0], static_cast<std::streamsize>(head.size()));
  head.resize(static_cast<size_t>(in.gcount()));
  if (in.bad() || head.empty())
    throw Error(ExitCode::BadInput, "cannot read the file — check the file and the disk");
  if (head.compare(0, 4, "PK\x03\x04") == 0) return is_export_zip(path) ? "export" : "torchscript";
  if (looks_like_tir(head)) return "tir";
  if (looks_like_onnx(head)) return "onnx";
  return "";
}

LoaderOpCounts& loader_op_counts() {
  static LoaderOpCounts counts;
  return counts;
}

Model load_model(const std::string& path) {
  install_jit_builtins();  // Note [TorchScript builtins through LibTorch's registry]
  Model m;
  m.source.path = path;
  m.source.format = detect_format(path);
  if (m.source.format.empty()) {
    std::string head = RangeReader(path).at(0, 2);
    if (head.size() == 2 && uint8_t(head[0]) == 0x80 && uint8_t(head[1]) <= 5)
      throw Error(ExitCode::BadInput,
                  std::string("this is a legacy (non-zip) torch.save pickle, not a TorchScript "
                              "model — ") +
                      kSaveHint);
    throw Error(ExitCode::BadInput,
                "not a model file (unrecognised content) — expected a TorchScript archive (.pt), "
                "an ONNX file (.onnx) or .tir text");
  }
  // The report's sha256 is computed on the second core while the model loads (Note [Source
  // hash]).
  std::future<std::string> sha =
      std::async(std::launch::async, [path] { return sha256_file(path); });
  if (m.source.format == "torchscript") {
    check_torchscript_zip(path);
    m.graph = load_torchscript(path, m.diags, &m.source_values);
    PhaseTimer t("import pipeline");
    run_import_pipeline(kTorchScriptImportPipeline, *m.graph, m.diags);  // Note [Import pipeline]
  } else if (m.source.format == "export") {
    m.graph = load_export(path, m.diags, &m.source_values);
    run_import_pipeline(kTorchScriptImportPipeline, *m.graph, m.diags);
  } else if (m.source.format == "tir") {
    m.graph = parse_tir(read_all(path), path);
  } else {
    m.graph = load_onnx(path, m.diags);
    run_import_pipeline(kOnnxImportPipeline, *m.graph, m.diags);  // Note [Import pipeline]
  }
  m.source.sha256 = sha.get();
  m.source.op_libraries = loaded_op_libraries();
  return m;
}

}  // namespace tt
