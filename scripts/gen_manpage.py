#!/usr/bin/python3
"""Writes tinytrace's man page and bash completion from the CLI's own --help texts.

    gen_manpage.py TINYTRACE OUT_DIR      -> OUT_DIR/tinytrace.1.gz, OUT_DIR/tinytrace.bash

The help of the tool and of each subcommand (CLI11's layout: a description, then sections such as
"Options:" whose entries are "  NAME    text" with continuation lines indented further) becomes
the man page: the tool's description and examples, OPTIONS, one COMMANDS subsection per
subcommand with its options. The completion script completes subcommands, each one's options, and
file names. Nothing is written by hand, so both follow the CLI (tools/install.cmake runs this at
build time and installs the results).
"""
import gzip
import os
import re
import subprocess
import sys

SECTION = re.compile(r"^([A-Z][A-Za-z ]*):$")  # "Options:", "Subcommands:", "Positionals:"
ENTRY = re.compile(r"^  (\S.*?)(?: {2,}(\S.*))?$")  # "  -o,--output-dir TEXT    Directory ..."


def help_text(binary, *args):
    r = subprocess.run([binary, *args, "--help"], capture_output=True, text=True)
    if r.returncode != 0:
        sys.exit(f"error: {binary} {' '.join(args)} --help exited {r.returncode}: {r.stderr}")
    return r.stdout


def parse(text):
    """(description lines, usage line, {section: [(name, description)]}) of one --help text.
    Lines of an "Examples" section (a footer) are kept whole, as (line, None)."""
    description, usage, sections = [], "", {}
    current, examples = None, False
    for line in text.splitlines():
        if line.startswith("Usage: "):
            usage = line[len("Usage: "):]
            continue
        m = SECTION.match(line)
        if m and usage:  # before the usage line, "Examples:" is part of the description
            current = sections.setdefault(m.group(1), [])
            examples = m.group(1) == "Examples"
            continue
        if current is None:
            description.append(line)
        elif examples:
            if line.strip():
                current.append((line[2:], None))
        elif line.startswith("   ") and current:  # continuation of the entry above
            name, desc = current[-1]
            current[-1] = (name, (desc + " " + line.strip()).strip())
        elif ENTRY.match(line):
            name, desc = ENTRY.match(line).groups()
            current.append((name.strip(), (desc or "").strip()))
    while description and not description[-1].strip():
        description.pop()
    return description, usage, sections


def roff(text):
    """Text escaped for roff: backslashes, hyphens (as minus signs in options), leading dots."""
    text = text.replace("\\", "\\e").replace("-", "\\-")
    return "\\&" + text if text.startswith((".", "'")) else text


def roff_paragraphs(lines):
    """Description lines as paragraphs; indented lines (examples) as indented no-fill blocks."""
    out, nofill = [], False
    for line in lines:
        indented = line.startswith("  ")
        if nofill and not indented:
            out += [".fi", ".RE"]
            nofill = False
        if not line.strip():
            out.append(".PP")
            continue
        if indented and not nofill:
            out += [".RS 2", ".nf"]
            nofill = True
        out.append(roff(line[2:] if indented else line.strip()))
    if nofill:
        out += [".fi", ".RE"]
    return out


def options_roff(entries):
    """Option entries as tagged paragraphs; whole lines (examples) as a no-fill block."""
    out = []
    for name, desc in entries:
        if desc is None:
            out += roff_paragraphs(["  " + name])
        else:
            out += [".TP", "\\fB" + roff(name) + "\\fR", roff(desc)]
    return out


def manpage(version, top, commands):
    description, usage, sections = top
    summary = description[0].split(" — ", 1)[-1].rstrip(".") if description else ""
    out = [f'.TH TINYTRACE 1 "" "{roff(version)}" "User Commands"', ".SH NAME",
           "tinytrace \\- " + roff(summary), ".SH SYNOPSIS", "\\fBtinytrace\\fR " +
           roff(usage.split(" ", 1)[1] if " " in usage else "")]
    for name, (_, cmd_usage, _) in commands.items():
        out += [".br", "\\fBtinytrace " + roff(name) + "\\fR " + roff(cmd_usage.split(" ", 2)[-1])]
    out += [".SH DESCRIPTION"] + roff_paragraphs(description[1:] if len(description) > 1 else [])
    out += [".SH OPTIONS"] + options_roff(sections.get("Options", []))
    out.append(".SH COMMANDS")
    for name, (cmd_description, cmd_usage, cmd_sections) in commands.items():
        out += [".SS " + roff(name), "\\fBtinytrace " + roff(name) + "\\fR " +
                roff(cmd_usage.split(" ", 2)[-1]), ".PP"]
        out += roff_paragraphs(cmd_description)
        for section, entries in cmd_sections.items():
            out += [".PP", "\\fI" + roff(section) + "\\fR"] + options_roff(entries)
    out += [".SH SEE ALSO", "The README of the tinytrace sources; \\fBpython3 \\-m tinytrace\\fR "
            "runs this command from Python, whose package \\fBtinytrace\\fR (convert, "
            "prepare_for_quantization, inspect, diff, profile) wraps it."]
    return "\n".join(out) + "\n"


def option_words(entries):
    """The option spellings of help entries ("-o,--output-dir TEXT" -> -o --output-dir)."""
    return [w for name, desc in entries if desc is not None
            for w in name.split(" ")[0].split(",") if w.startswith("-")]


def completion(top, commands):
    global_opts = " ".join(option_words(top[2].get("Options", [])))
    cases = "\n".join(f'        {name}) opts="{" ".join(option_words(sections.get("Options", [])))}'
                      ' $global" ;;' for name, (_, _, sections) in commands.items())
    names, alternatives = " ".join(commands), "|".join(commands)
    return f"""# bash completion for tinytrace, generated from its --help by scripts/gen_manpage.py.
_tinytrace() {{
    local cur=${{COMP_WORDS[COMP_CWORD]}} cmd="" opts i
    local global="{global_opts}"
    for ((i = 1; i < COMP_CWORD; i++)); do
        case ${{COMP_WORDS[i]}} in {alternatives}) cmd=${{COMP_WORDS[i]}}; break ;; esac
    done
    case $cmd in
{cases}
        *) opts="$global" ;;
    esac
    if [[ $cur == -* ]]; then
        COMPREPLY=($(compgen -W "$opts" -- "$cur"))
    elif [[ -z $cmd ]]; then
        COMPREPLY=($(compgen -W "{names}" -- "$cur"))
    else
        COMPREPLY=($(compgen -f -- "$cur"))
    fi
}}
complete -o filenames -o bashdefault -F _tinytrace tinytrace
"""


def main():
    if len(sys.argv) != 3:
        sys.exit("usage: gen_manpage.py TINYTRACE OUT_DIR")
    binary, out_dir = sys.argv[1:]
    version = subprocess.run([binary, "--version"], capture_output=True, text=True,
                             check=True).stdout.strip()
    top = parse(help_text(binary))
    commands = {name: parse(help_text(binary, name))
                for name, _ in top[2].get("Subcommands", [])}
    if not commands:
        sys.exit(f"error: no subcommands in {binary} --help")
    os.makedirs(out_dir, exist_ok=True)
    page = manpage(version, top, commands).encode()
    with open(os.path.join(out_dir, "tinytrace.1.gz.tmp"), "wb") as f:
        # mtime 0 and no file name: the same help gives the same bytes (reproducible packages).
        with gzip.GzipFile(filename="", mode="wb", fileobj=f, mtime=0, compresslevel=9) as z:
            z.write(page)
    os.replace(os.path.join(out_dir, "tinytrace.1.gz.tmp"), os.path.join(out_dir, "tinytrace.1.gz"))
    with open(os.path.join(out_dir, "tinytrace.bash.tmp"), "w") as f:
        f.write(completion(top, commands))
    os.replace(os.path.join(out_dir, "tinytrace.bash.tmp"), os.path.join(out_dir, "tinytrace.bash"))
    return 0


if __name__ == "__main__":
    sys.exit(main())
