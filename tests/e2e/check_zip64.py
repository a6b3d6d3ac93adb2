"""ZIP64 archives convert like the archives they were rewritten from (issue #17; Note [ZIP64] in
lib/loaders/loader.cpp).

    check_zip64.py TINYTRACE WORK_DIR torchscript|export|torchscript_over_4g|export_over_4g

Makes a small model (Linear(256, 128): its weight is a 128 KiB record, so it is mapped from the
archive and copied to NAME.pth from the input; ReLU; Linear(128, 10)), saves it as a TorchScript
archive (torch.jit.trace) or a torch.export .pt2 (torch.export.save), and rewrites that archive
into ZIP64 form (entries' bytes as they are: stored, or deflated like a TorchScript archive's
code/): every central directory entry with its sizes and local header offset moved into
a ZIP64 extra field (0x0001), every local header with 0xffffffff sizes and a ZIP64 extra field,
ZIP64 end of central directory record and locator, the EOCD saying 0xffff / 0xffffffff. In a .pt2
the torch.save zip of the state dict, which is itself an entry, is rewritten the same way. Local
headers that have PyTorch's "FB" padding field give the ZIP64 field's 20 bytes out of it, so the
records keep their 64-byte alignment (and stay mapped).

With _over_4g, a stored entry of 4 GiB of zeros comes first (a sparse file: it takes neither disk
nor memory), so every other entry, the central directory and the end records are at offsets that
need ZIP64.

Both archives convert with --verify; NAME.py and NAME.pth must be byte for byte the same, the
ZIP64 one's log must show the weight mapped and copied unchanged from the input (its CRC-32 read
import zygote
zygote.delegate()  # first, before torch is imported: Note [Torch zygote]
from the ZIP64 central directory), and NAME.pth must hold the original's tensors exactly.
"""
import os
import shutil
import struct
import subprocess
import sys
import zlib

import torch

U32 = 0xFFFFFFFF


def fail(msg):
    print("FAIL: " + msg)
    sys.exit(1)


def entries(z):
    """The central directory of zip bytes z (not ZIP64): [(name, cd fields, extra, comment)]."""
    eocd = z.rindex(b"PK\x05\x06")
    count, cd_size, cd_off = struct.unpack_from("<HII", z, eocd + 10)
    out, p = [], cd_off
    for _ in range(count):
        f = struct.unpack_from("<IHHHHHHIIIHHHHHII", z, p)
        assert f[0] == 0x02014B50
        n, e, c = f[10], f[11], f[12]
        out.append((z[p + 46:p + 46 + n], f, z[p + 46 + n:p + 46 + n + e],
                    z[p + 46 + n + e:p + 46 + n + e + c]))
        p += 46 + n + e + c
    return out


def without_zip64(extra):
    out, q = b"", 0
    while q + 4 <= len(extra):
        i, n = struct.unpack_from("<HH", extra, q)
        if i != 1:
            out += extra[q:q + 4 + n]
        q += 4 + n
    return out


def local_extra(extra, size, csize):
    """The local header's extra field with a ZIP64 field in front; taken from the "FB" padding
    when it is long enough, so that the data stay where they were."""
    z64 = struct.pack("<HHQQ", 1, 16, size, csize)
    out, q, taken = b"", 0, False
    while q + 4 <= len(extra):
        i, n = struct.unpack_from("<HH", extra, q)
        if i == 0x4246 and n >= 20 and not taken:
            out += struct.pack("<HH", i, n - 20) + extra[q + 4 + 20:q + 4 + n]
            taken = True
        elif i != 1:
            out += extra[q:q + 4 + n]
        q += 4 + n
    return z64 + out


def to_zip64(z, inner=None, pad=None):
    """z rewritten into ZIP64 form (its entries' bytes as they are: stored or deflated);
    `inner(name, data)` may replace a stored entry's bytes. With pad = (name, size, crc), a stored
    entry of `size` zero bytes comes first, which this does not hold: the result is (the bytes
    before the zeros, their size, the bytes after them)."""
    out, cd, skip = b"", b"", 0
    if pad:
        name, skip, crc = pad
        lextra = struct.pack("<HHQQ", 1, 16, skip, skip)
        out = struct.pack("<IHHHHHIIIHH", 0x04034B50, 45, 0, 0, 0, 0x21, crc, U32, U32,
                          len(name), len(lextra)) + name + lextra
        head = out
        cextra = struct.pack("<HHQQQ", 1, 24, skip, skip, 0)
        cd = struct.pack("<IHHHHHHIIIHHHHHII", 0x02014B50, 45, 45, 0, 0, 0, 0x21, crc, U32, U32,
                         len(name), len(cextra), 0, 0, 0, 0, U32) + name + cextra
        out = b""
    for name, f, extra, comment in entries(z):
        at, method, csize, size, crc = f[16], f[4], f[8], f[9], f[7]
        lf = struct.unpack_from("<IHHHHHIIIHH", z, at)
        assert lf[0] == 0x04034B50
        n, e = lf[9], lf[10]
        data = z[at + 30 + n + e:at + 30 + n + e + csize]
        if inner is not None and method == 0:
            new = inner(name, data)
            if new is not data:
                data, crc, size, csize = new, zlib.crc32(new), len(new), len(new)
        offset = len(head) + skip + len(out) if pad else len(out)
        lextra = local_extra(z[at + 30 + n:at + 30 + n + e], size, csize)
        # (No data descriptor: the local header has the CRC; flag bit 3 cleared.)
        out += struct.pack("<IHHHHHIIIHH", 0x04034B50, 45, lf[2] & ~8, method, lf[4], lf[5], crc,
                           U32, U32, len(name), len(lextra)) + name + lextra + data
        cextra = struct.pack("<HHQQQ", 1, 24, size, csize, offset) + without_zip64(extra)
        cd += struct.pack("<IHHHHHHIIIHHHHHII", 0x02014B50, 45, 45, f[3] & ~8, method, f[5], f[6],
                          crc, U32, U32, len(name), len(cextra), len(comment), 0, f[14], f[15],
                          U32)
        cd += name + cextra + comment
    count = len(entries(z)) + (1 if pad else 0)
    cd_off = len(head) + skip + len(out) if pad else len(out)
    end64 = cd_off + len(cd)
    out += cd
    out += struct.pack("<IQHHIIQQQQ", 0x06064B50, 44, 45, 45, 0, 0, count, count, len(cd), cd_off)
    out += struct.pack("<IIQI", 0x07064B50, 0, end64, 1)
    out += struct.pack("<IHHHHIIH", 0x06054B50, 0, 0, 0xFFFF, 0xFFFF, U32, U32, 0)
    return (head, skip, out) if pad else out


def zeros_crc(n):
    """The CRC-32 of n zero bytes, without reading them: zlib's crc32_combine (GF(2) matrices)."""
    def times(mat, vec):
        out, i = 0, 0
        while vec:
            if vec & 1:
                out ^= mat[i]
            vec >>= 1
            i += 1
        return out

    def square(mat):
        return [times(mat, mat[i]) for i in range(32)]

    def combine(crc1, crc2, len2):
        op = [0xEDB88320] + [1 << i for i in range(31)]   # the CRC register after one zero bit
        op = square(square(square(op)))                   # after one zero byte
        while len2:
            if len2 & 1:
                crc1 = times(op, crc1)
            op, len2 = square(op), len2 >> 1
        return crc1 ^ crc2

    crc, zeros, zeros_len = 0, zlib.crc32(b"\0"), 1  # zeros: the CRC of zeros_len zero bytes
    while n:
        if n & 1:
            crc = combine(crc, zeros, zeros_len)
        zeros, zeros_len, n = combine(zeros, zeros, zeros_len), 2 * zeros_len, n >> 1
    return crc


class Model(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.fc1 = torch.nn.Linear(256, 128)
        self.fc2 = torch.nn.Linear(128, 10)

    def forward(self, x):
        return self.fc2(torch.relu(self.fc1(x)))


def convert(tinytrace, src, out):
    r = subprocess.run([tinytrace, "convert", src, "-o", out, "--name", "M", "--verify",
                        "--input-shape", "2,256", "-vv"],
                       capture_output=True, text=True)
    if r.returncode != 0:
        fail("convert %s failed (exit %s):\n%s" % (src, r.returncode, r.stderr))
    return r.stderr


def main():
    tinytrace, work, mode = sys.argv[1:4]
    fmt = mode.split("_")[0]
    shutil.rmtree(work, ignore_errors=True)
    os.makedirs(work)
    torch.manual_seed(0)
    model = Model().eval()
    x = torch.randn(2, 256)
    ext = ".pt2" if fmt == "export" else ".pt"
    plain = os.path.join(work, "plain", "m" + ext)
    wide = os.path.join(work, "zip64", "m" + ext)
    os.makedirs(os.path.dirname(plain))
    os.makedirs(os.path.dirname(wide))
    if fmt == "export":
        torch.export.save(torch.export.export(model, (x,)), plain)
        inner = lambda name, data: (to_zip64(data) if name.endswith(b"serialized_state_dict.pt")
                                    else data)
    else:
        with torch.no_grad():
            torch.jit.trace(model, x).save(plain)
        inner = None
    with open(plain, "rb") as f:
        z = f.read()
    pad = None
    if mode.endswith("_over_4g"):
        # A stored entry of zeros first, written with a seek (a sparse file: no disk, no memory),
        # so that every other entry, the directory and the end records are past 4 GiB.
        # The entries move by 4 GiB + 4 KiB in all: their 64-byte alignment stays.
        name = entries(z)[0][0].split(b"/")[0] + b"/padding"
        n = (4 << 30) + 4096 - (30 + len(name) + 20)
        pad = name, n, zeros_crc(n)
        head, skip, rest = to_zip64(z, inner, pad)
        with open(wide, "wb") as f:
            f.write(head)
            f.seek(skip, 1)
            f.write(rest)
        st = os.stat(wide)
        if st.st_size < 4 << 30 or st.st_blocks * 512 > 64 << 20:
            fail("the padded archive is not a sparse file over 4 GiB")
        size64 = st.st_size
    else:
        z64 = to_zip64(z, inner)
        with open(wide, "wb") as f:
            f.write(z64)
        size64 = len(z64)
    # Python's zipfile reads the rewritten archive as the same entries.
    import zipfile
    with zipfile.ZipFile(plain) as a, zipfile.ZipFile(wide) as b:
        names = [i.filename for i in b.infolist() if not pad or i.filename != pad[0].decode()]
        same = [i.filename for i in a.infolist()] == names and all(
            n.endswith("state_dict.pt") or a.read(n) == b.read(n) for n in names)
        if not same or (not pad and b.testzip() is not None):
            fail("the rewritten archive does not hold the same entries")

    log_plain = convert(tinytrace, plain, os.path.join(work, "plain", "out"))
    log_wide = convert(tinytrace, wide, os.path.join(work, "zip64", "out"))
    for line in log_wide.splitlines():
        if "mapped from the archive" in line or "copied unchanged" in line:
            print(line.strip())
    for log, what in ((log_plain, "original"), (log_wide, "ZIP64")):
        if "1 records (0 MiB) copied unchanged" not in log:
            fail("the %s's 128 KiB weight was not copied from the input:\n%s" % (what, log))
    for name in ("M.py", "M.pth"):
        with open(os.path.join(work, "plain", "out", name), "rb") as f:
            a = f.read()
        with open(os.path.join(work, "zip64", "out", name), "rb") as f:
            b = f.read()
        if a != b:
            fail("%s of the ZIP64 archive differs from the original's" % name)
    state = torch.load(os.path.join(work, "zip64", "out", "M.pth"))
    ref = model.state_dict()
    if list(state) != list(ref) or not all(torch.equal(state[k], ref[k]) for k in ref):
        fail("M.pth does not hold the original's tensors")
    print("%s: %d -> %d bytes in ZIP64 form; M.py and M.pth identical to the original's"
          % (mode, len(z), size64))
    shutil.rmtree(work)


if __name__ == "__main__":
    main()
