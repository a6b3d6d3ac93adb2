#!/usr/bin/env python3
"""tir_check.py: runs the .tir pass tests (testdata/passes/<pass>/<case>.tir).

A test file holds one or more cases separated by lines `// -----`. Each case is run on its own
through `tinytrace opt CASE --passes ... --verify-each` and checked with these comment lines:

  // RUN: --passes fold-batchnorm      arguments after `tinytrace opt FILE` (a RUN in the first
                                       case is the default for the later ones); `-v`, `-vv`,
                                       `-vvv` are global flags and go before `opt`
  // CHECK: text                       text occurs in the output, after the previous match
  // CHECK-NEXT: text                  ... on the line right after the previous match
  // CHECK-SAME: text                  ... on the same line as the previous match, after it
  // CHECK-NOT: text                   text does not occur between the surrounding matches
  // CHECK-LABEL: text                 splits the output: the checks that follow only look up to
                                       the next label
  // EXPECT-ERROR: text                the run fails (exit code != 0) and stderr contains text
  // EXPECT-EXIT: N                    the exit code is N (with EXPECT-ERROR)
  // EXPECT-STDERR: text               stderr contains text (e.g. why a pass did not fire, with -vvv)

Patterns are literal text, except `{{regex}}` parts, which are Python regular expressions.
Runs of blanks in patterns and output compare equal. Exit status 0 when every case passes.

Usage: tir_check.py --tinytrace BUILD/tinytrace FILE.tir [FILE.tir ...]
"""

import argparse
import os
import re
import shlex
import subprocess
import sys
import tempfile

SEPARATOR = re.compile(r"^\s*// -{4,}\s*$")
DIRECTIVE = re.compile(
    r"^\s*//\s*(RUN|CHECK|CHECK-NEXT|CHECK-SAME|CHECK-NOT|CHECK-LABEL|EXPECT-ERROR|EXPECT-EXIT|"
    r"EXPECT-STDERR):(.*)$")


class Case:
    def __init__(self, first_line):
        self.first_line = first_line  # 1-based line of the case in the file
        self.lines = []               # (line number, text)
        self.run = None
        self.checks = []              # (kind, pattern, line number)
        self.expect_error = []
        self.expect_exit = None
        self.expect_stderr = []


def split_cases(path):
    with open(path, encoding="utf-8") as f:
        text = f.read().split("\n")
    cases = [Case(1)]
    for i, line in enumerate(text, start=1):
        if SEPARATOR.match(line):
            cases.append(Case(i + 1))
            continue
        case = cases[-1]
        case.lines.append((i, line))
        m = DIRECTIVE.match(line)
        if not m:
            continue
        kind, rest = m.group(1), m.group(2).strip()
        if kind == "RUN":
            case.run = rest
        elif kind == "EXPECT-ERROR":
            case.expect_error.append(rest)
        elif kind == "EXPECT-EXIT":
            case.expect_exit = int(rest)
        elif kind == "EXPECT-STDERR":
            case.expect_stderr.append(rest)
        else:
            case.checks.append((kind, rest, i))
    return cases


def pattern_regex(pattern):
    parts = re.split(r"(\{\{.*?\}\})", pattern)
    out = []
    for p in parts:
        if p.startswith("{{") and p.endswith("}}"):
            out.append("(?:" + p[2:-2] + ")")
        else:
            for j, word in enumerate(re.split(r"[ \t]+", p)):
                if j:
                    out.append(r"[ \t]+")
                out.append(re.escape(word))
    return re.compile("".join(out))


def line_of(text, pos):
    return text.count("\n", 0, pos)


class CheckFailure(Exception):
    pass


def run_checks(checks, output, where):
    """FileCheck-style matching of `checks` against `output`."""
    # Labels first: they cut the output into regions.
    regions = []  # (start, end, checks)
    pos = 0
    current = []
    region_start = 0
    labels = []
    for kind, pat, ln in checks:
        if kind == "CHECK-LABEL":
            m = pattern_regex(pat).search(output, pos)
            if not m:
                raise CheckFailure(f"{where}:{ln}: CHECK-LABEL: '{pat}' not found")
            labels.append((m, ln))
            regions.append((region_start, m.start(), current))
            current = []
            region_start = m.end()
            pos = m.end()
        else:
            current.append((kind, pat, ln))
    regions.append((region_start, len(output), current))

    for start, end, region_checks in regions:
        pos = start
        prev_end = start if start > 0 else None
        pending_not = []
        for kind, pat, ln in region_checks:
            rx = pattern_regex(pat)
            if kind == "CHECK-NOT":
                pending_not.append((rx, pat, ln))
                continue
            m = rx.search(output, pos, end)
            if kind == "CHECK-NEXT":
                want = (line_of(output, prev_end) + 1) if prev_end is not None else 0
                if not m:
                    raise CheckFailure(f"{where}:{ln}: CHECK-NEXT: '{pat}' not found")
                if line_of(output, m.start()) != want:
                    raise CheckFailure(f"{where}:{ln}: CHECK-NEXT: '{pat}' found on output line "
                                       f"{line_of(output, m.start()) + 1}, expected line {want + 1}")
            elif kind == "CHECK-SAME":
                if not m or prev_end is None or line_of(output, m.start()) != line_of(output, prev_end):
                    raise CheckFailure(f"{where}:{ln}: CHECK-SAME: '{pat}' is not on the same line")
            elif not m:
                raise CheckFailure(f"{where}:{ln}: CHECK: '{pat}' not found (after output line "
                                   f"{line_of(output, pos) + 1})")
            for nrx, npat, nln in pending_not:
                bad = nrx.search(output, pos, m.start())
                if bad:
                    raise CheckFailure(f"{where}:{nln}: CHECK-NOT: '{npat}' found at output line "
                                       f"{line_of(output, bad.start()) + 1}")
            pending_not = []
            pos = m.end()
            prev_end = m.end()
        for nrx, npat, nln in pending_not:
            bad = nrx.search(output, pos, end)
            if bad:
                raise CheckFailure(f"{where}:{nln}: CHECK-NOT: '{npat}' found at output line "
                                   f"{line_of(output, bad.start()) + 1}")


def run_case(tinytrace, path, case, default_run, tmpdir, index):
    run = case.run if case.run is not None else default_run
    if run is None:
        raise CheckFailure(f"{path}:{case.first_line}: no // RUN: line")
    args = shlex.split(run)
    global_flags = [a for a in args if re.fullmatch(r"-v+|--verbose|-q|--quiet", a)]
    args = [a for a in args if a not in global_flags]
    if "--verify-each" not in args:
        args.append("--verify-each")
    # The case alone, on its original line numbers, so messages point into the test file.
    body = [""] * (case.first_line - 1) + [t for _, t in case.lines]
    case_file = os.path.join(tmpdir, f"case{index}_" + os.path.basename(path))
    with open(case_file, "w", encoding="utf-8") as f:
        f.write("\n".join(body))
    cmd = [tinytrace] + global_flags + ["opt", case_file] + args
    proc = subprocess.run(cmd, capture_output=True, text=True, timeout=300)
    where = path
    shown = " ".join(shlex.quote(c) for c in cmd)
    if case.expect_error or case.expect_exit is not None:
        if proc.returncode == 0:
            raise CheckFailure(f"{where}:{case.first_line}: expected an error, but `{shown}` "
                               f"succeeded\n{proc.stdout}")
        if case.expect_exit is not None and proc.returncode != case.expect_exit:
            raise CheckFailure(f"{where}:{case.first_line}: exit code {proc.returncode}, expected "
                               f"{case.expect_exit}\n{proc.stderr}")
        for e in case.expect_error:
            if not pattern_regex(e).search(proc.stderr):
                raise CheckFailure(f"{where}:{case.first_line}: EXPECT-ERROR '{e}' not in stderr:\n"
                                   f"{proc.stderr}")
    elif proc.returncode != 0:
        raise CheckFailure(f"{where}:{case.first_line}: `{shown}` failed with exit code "
                           f"{proc.returncode}:\n{proc.stderr}")
    for e in case.expect_stderr:
        if not pattern_regex(e).search(proc.stderr):
            raise CheckFailure(f"{where}:{case.first_line}: EXPECT-STDERR '{e}' not in stderr:\n"
                               f"{proc.stderr}")
    try:
        run_checks(case.checks, proc.stdout, where)
    except CheckFailure as f:
        raise CheckFailure(f"{f}\n--- command: {shown}\n--- output:\n{proc.stdout}")


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--tinytrace", required=True, help="path of the tinytrace binary")
    ap.add_argument("files", nargs="+")
    a = ap.parse_args()
    failures = 0
    total = 0
    with tempfile.TemporaryDirectory(prefix="tir_check_") as tmpdir:
        for path in a.files:
            cases = split_cases(path)
            default_run = cases[0].run
            for i, case in enumerate(cases):
                if not any(t.strip() and not t.strip().startswith("//") for _, t in case.lines):
                    continue  # a case of comments only (file header)
                total += 1
                try:
                    run_case(a.tinytrace, path, case, default_run, tmpdir, i)
                except CheckFailure as f:
                    failures += 1
                    print(f"FAIL {f}", file=sys.stderr)
                except subprocess.TimeoutExpired:
                    failures += 1
                    print(f"FAIL {path}:{case.first_line}: timed out", file=sys.stderr)
    print(f"tir_check: {total - failures}/{total} case(s) passed")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
