// ZIP64 archives (Note [ZIP64] in lib/loaders/loader.cpp), built byte by byte here: read_zip and
// zip_records find each entry's bytes whichever of its size, compressed size, local header offset
// and disk number the central directory moves into the ZIP64 extra field (0x0001), through the
// ZIP64 end record its locator points to, with the data after the local header's own extra field;
// damaged ZIP64 records are one BadInput error line, never a read outside the file.
#include "loaders/loader.h"
#include "support/diag.h"

#include <doctest/doctest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

using namespace tt;

namespace {

void put16(std::string& b, uint64_t v) {
  b += char(v & 0xff);
  b += char((v >> 8) & 0xff);
}
void put32(std::string& b, uint64_t v) {
  put16(b, v & 0xffff);
  put16(b, (v >> 16) & 0xffff);
}
void put64(std::string& b, uint64_t v) {
  put32(b, v & 0xffffffffu);
  put32(b, v >> 32);
}

// How the archive is written. Wide fields hold 0xffffffff (0xffff) in the central directory entry
// and their value in its 0x0001 extra field.
struct Layout {
  bool wide_size = false, wide_csize = false, wide_offset = false, wide_disk = false;
  bool other_extra = true;   // an unrelated extra field before the 0x0001 one
  bool local_zip64 = false;  // local headers with 0xffffffff sizes and a ZIP64 extra field
  std::string local_pad;     // more extra bytes in the local header only (an "FB" field)
  bool end64 = true;         // a ZIP64 end record and locator; the EOCD holds 0xffff/0xffffffff
  uint64_t extra_size = 0;   // when not 0: the uncompressed size in the 0x0001 field (the reader
                             // must take the compressed size, the next one, for the data)
};

struct Built {
  std::string bytes;
  std::vector<uint64_t> data_at;  // where each entry's bytes start
};

Built build(const std::vector<std::pair<std::string, std::string>>& entries, const Layout& l) {
  Built b;
  std::string& z = b.bytes;
  std::vector<uint64_t> header_at;
  for (const auto& [name, data] : entries) {
    header_at.push_back(z.size());
    std::string extra;
    if (l.local_zip64) {
      put16(extra, 0x0001);
      put16(extra, 16);
      put64(extra, data.size());
      put64(extra, data.size());
    }
    if (!l.local_pad.empty()) {
      put16(extra, 0x4246);
      put16(extra, l.local_pad.size());
      extra += l.local_pad;
    }
    put32(z, 0x04034b50);
    put16(z, 45);
    put16(z, 0);
    put16(z, 0);  // stored
    put16(z, 0);
    put16(z, 0x21);
    put32(z, 0x12345678);
    put32(z, l.local_zip64 ? 0xffffffffu : data.size());
    put32(z, l.local_zip64 ? 0xffffffffu : data.size());
    put16(z, name.size());
    put16(z, extra.size());
    z += name + extra;
    b.data_at.push_back(z.size());
    z += data;
  }
  const uint64_t cd_off = z.size();
  for (size_t i = 0; i < entries.size(); ++i) {
    const auto& [name, data] = entries[i];
    std::string extra;
    if (l.other_extra) {
      put16(extra, 0x5455);  // extended timestamp
      put16(extra, 5);
      extra += std::string(5, '\1');
    }
    if (l.wide_size || l.wide_csize || l.wide_offset || l.wide_disk) {
      std::string f;
      if (l.wide_size) put64(f, l.extra_size ? l.extra_size : data.size());
      if (l.wide_csize) put64(f, data.size());
      if (l.wide_offset) put64(f, header_at[i]);
      if (l.wide_disk) put32(f, 0);
      put16(extra, 0x0001);
      put16(extra, f.size());
      extra += f;
    }
    put32(z, 0x02014b50);
    put16(z, 45);
    put16(z, 45);
    put16(z, 0);
    put16(z, 0);
    put16(z, 0);
    put16(z, 0x21);
    put32(z, 0x9abcdef0 + i);
    put32(z, l.wide_csize ? 0xffffffffu : data.size());
    put32(z, l.wide_size ? 0xffffffffu : data.size());
    put16(z, name.size());
    put16(z, extra.size());
    put16(z, 0);
    put16(z, l.wide_disk ? 0xffff : 0);
    put16(z, 0);
    put32(z, 0);
    put32(z, l.wide_offset ? 0xffffffffu : header_at[i]);
    z += name + extra;
  }
  const uint64_t cd_size = z.size() - cd_off, end64_at = z.size();
  if (l.end64) {
    put32(z, 0x06064b50);
    put64(z, 44);
    put16(z, 45);
    put16(z, 45);
    put32(z, 0);
    put32(z, 0);
    put64(z, entries.size());
    put64(z, entries.size());
    put64(z, cd_size);
    put64(z, cd_off);
    put32(z, 0x07064b50);
    put32(z, 0);
    put64(z, end64_at);
    put32(z, 1);
  }
  put32(z, 0x06054b50);
  put16(z, 0);
  put16(z, 0);
  put16(z, l.end64 ? 0xffff : entries.size());
  put16(z, l.end64 ? 0xffff : entries.size());
  put32(z, l.end64 ? 0xffffffffu : cd_size);
  put32(z, l.end64 ? 0xffffffffu : cd_off);
  put16(z, 0);
  return b;
}

struct TempZip {
  std::string path;
  explicit TempZip(const std::string& bytes) {
    path = (std::filesystem::temp_directory_path() /
            ("tt_zip64_" + std::to_string(::getpid()) + ".zip"))
               .string();
    std::ofstream(path, std::ios::binary).write(bytes.data(), std::streamsize(bytes.size()));
  }
  ~TempZip() { std::filesystem::remove(path); }
};

const std::vector<std::pair<std::string, std::string>> kEntries = {
    {"archive/data.pkl", "pickle bytes"},
    {"archive/data/0", std::string(300, '\7') + "end"},
    {"archive/version", "3\n"},
};

ZipContents read_all_entries(const std::string& bytes) {
  TempZip f(bytes);
  return read_zip(
      f.path, [](const std::string& n) { return n != "archive/data/0"; },
      [](const std::string&) { return true; });
}

void check_contents(const Built& b) {
  ZipContents z = read_all_entries(b.bytes);
  REQUIRE(z.names.size() == kEntries.size());
  for (size_t i = 0; i < kEntries.size(); ++i) CHECK(z.names[i] == kEntries[i].first);
  CHECK(z.data.at("archive/data.pkl") == "pickle bytes");
  CHECK(z.data.at("archive/version") == "3\n");
  CHECK(z.ranges.at("archive/data/0") ==
        std::pair<uint64_t, uint64_t>(b.data_at[1], kEntries[1].second.size()));
  TempZip f(b.bytes);
  std::vector<ZipRecord> records = zip_records(f.path, 0, b.bytes.size());
  REQUIRE(records.size() == kEntries.size());
  for (size_t i = 0; i < kEntries.size(); ++i) {
    CHECK(records[i].name == kEntries[i].first);
    CHECK(records[i].data_offset == b.data_at[i]);
    CHECK(records[i].size == kEntries[i].second.size());
    CHECK(records[i].crc == 0x9abcdef0 + i);
  }
}

// The error reading `bytes` gives: BadInput, one line, containing `words`.
void check_error(const std::string& bytes, const std::string& words) {
  try {
    read_all_entries(bytes);
  } catch (const Error& e) {
    CHECK(e.code() == ExitCode::BadInput);
    const std::string what = e.what();
    CHECK(what.find('\n') == std::string::npos);
    CHECK_MESSAGE(what.find(words) != std::string::npos, what);
    TempZip f(bytes);
    CHECK(zip_records(f.path, 0, bytes.size()).size() < kEntries.size());  // not the damaged one
    return;
  }
  FAIL("no error for a damaged archive (expected: " << words << ")");
}

void set32(std::string& b, size_t at, uint32_t v) {
  std::string s;
  put32(s, v);
  b.replace(at, 4, s);
}
void set64(std::string& b, size_t at, uint64_t v) {
  std::string s;
  put64(s, v);
  b.replace(at, 8, s);
}

// Offsets in the archive build() writes with `end64`: the locator's pointer, the ZIP64 end
// record's directory size and offset.
size_t locator_pointer(const std::string& z) { return z.size() - 22 - 20 + 8; }
size_t end64_at(const std::string& z) { return z.size() - 22 - 20 - 56; }

}  // namespace

TEST_CASE("zip64: every variant of the ZIP64 extra field is read") {
  for (int mask = 0; mask < 16; ++mask) {
    Layout l;
    l.wide_size = mask & 1;
    l.wide_csize = mask & 2;
    l.wide_offset = mask & 4;
    l.wide_disk = mask & 8;
    for (bool end64 : {true, false})
      for (bool other : {true, false}) {
        l.end64 = end64;
        l.other_extra = other;
        CAPTURE(mask);
        CAPTURE(end64);
        CAPTURE(other);
        check_contents(build(kEntries, l));
      }
  }
}

TEST_CASE("zip64: the extra field's values are taken in their order") {
  Layout l;
  l.wide_size = l.wide_csize = l.wide_offset = true;
  l.extra_size = uint64_t(1) << 40;  // not the stored size: read as the data's size, it is an error
  check_contents(build(kEntries, l));
}

TEST_CASE("zip64: the data start after the local header's own extra field") {
  Layout l;
  l.wide_size = l.wide_csize = l.wide_offset = true;
  l.local_zip64 = true;
  l.local_pad = std::string(37, 'Z');  // the local extra field is longer than the directory's
  check_contents(build(kEntries, l));
}

TEST_CASE("zip64: damaged ZIP64 records are one BadInput error") {
  Layout wide;
  wide.wide_size = wide.wide_csize = wide.wide_offset = true;
  const std::string good = build(kEntries, wide).bytes;
  std::string z;

  SUBCASE("the locator points past the end of the file") {
    z = good;
    set64(z, locator_pointer(z), uint64_t(1) << 40);
    check_error(z, "locator points outside the archive");
  }
  SUBCASE("the locator points into the EOCD") {
    z = good;
    set64(z, locator_pointer(z), z.size() - 30);
    check_error(z, "locator points outside the archive");
  }
  SUBCASE("the locator points at something else") {
    z = good;
    set64(z, locator_pointer(z), 0);
    check_error(z, "no ZIP64 end-of-central-directory record");
  }
  SUBCASE("the ZIP64 end record's directory lies past its end") {
    z = good;
    set64(z, end64_at(z) + 40, uint64_t(1) << 62);  // directory size
    check_error(z, "no valid central directory");
    z = good;
    set64(z, end64_at(z) + 48, ~uint64_t(0) - 4);  // directory offset: would wrap
    check_error(z, "no valid central directory");
  }
  SUBCASE("an entry count far beyond the directory") {
    z = good;
    set64(z, end64_at(z) + 24, ~uint64_t(0));
    set64(z, end64_at(z) + 32, ~uint64_t(0));
    check_error(z, "no valid central directory");
  }
  SUBCASE("a ZIP64 EOCD without locator") {
    Layout l = wide;
    z = build(kEntries, l).bytes;
    set32(z, z.size() - 22 - 20, 0x01020304);  // the locator's signature
    check_error(z, "without its ZIP64 end-of-central-directory locator");
  }
  SUBCASE("a ZIP64 extra field shorter than its fields") {
    const std::string& e = kEntries[0].first;
    z = good;
    // The first entry's 0x0001 field: after its name and the 9-byte timestamp field.
    size_t cd = z.find(std::string("\x50\x4b\x01\x02", 4));
    size_t len_at = cd + 46 + e.size() + 9 + 2;
    z[len_at] = 16;  // 16 of the 24 bytes the three wide fields need (the rest stays in place)
    check_error(z, "ZIP64 extra field is shorter");
  }
  SUBCASE("an extra field running past its entry") {
    const std::string& e = kEntries[0].first;
    z = good;
    size_t cd = z.find(std::string("\x50\x4b\x01\x02", 4));
    z[cd + 46 + e.size() + 9 + 2] = char(200);
    check_error(z, "runs past its entry");
  }
  SUBCASE("no ZIP64 extra field for a wide field") {
    Layout l;
    l.wide_size = true;
    z = build(kEntries, l).bytes;
    size_t cd = z.find(std::string("\x50\x4b\x01\x02", 4));
    size_t id_at = cd + 46 + kEntries[0].first.size() + 9;
    z[id_at] = 0x02;  // the 0x0001 field becomes 0x0002
    check_error(z, "no ZIP64 extra field");
  }
  SUBCASE("a size from the extra field past the end of the file") {
    z = good;
    size_t cd = z.find(std::string("\x50\x4b\x01\x02", 4));
    size_t field = cd + 46 + kEntries[0].first.size() + 9 + 4;
    set64(z, field, ~uint64_t(0) - 8);      // uncompressed
    set64(z, field + 8, ~uint64_t(0) - 8);  // compressed
    check_error(z, "zip entry archive/data.pkl is truncated or corrupt");
  }
  SUBCASE("a local header offset from the extra field past the end of the file") {
    z = good;
    size_t cd = z.find(std::string("\x50\x4b\x01\x02", 4));
    set64(z, cd + 46 + kEntries[0].first.size() + 9 + 4 + 16, ~uint64_t(0) - 10);
    check_error(z, "no valid central directory");
  }
  SUBCASE("the archive cut short") {
    for (size_t cut : {size_t(1), size_t(23), size_t(50), size_t(100)}) {
      CAPTURE(cut);
      check_error(good.substr(0, good.size() - cut), "truncated or corrupt");
    }
  }
}
