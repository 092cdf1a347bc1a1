#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# docs.sh - the docs run as written: every shell command block and every
# complete code example of README.md, docs/*.md and the man pages, in a
# temporary home with the project installed under $HOME/earth and a
# reader's folder (the repository's files linked into it, so the commands
# that name build/... or threaded-c/... work as from a clone). Run by
# `make test-docs` (and `make test`).
#
# Blocks, in the order of the pages (README.md, docs/*.md, man/man1,
# man/man3), each a fenced block (```sh, ```c, ...) or a man page's
# .EX/.EE; what is done with one is said by a comment on the line before
# it, `<!-- docs-test: CLAUSES -->` (a man page: `.\" docs-test: CLAUSES`),
# clauses separated by " ;; ":
#   file NAME       the block is a file the reader saves as NAME (written
#                   before any block runs, so commands above it may use it)
#   then: CMD       after writing it (at its place in the page), run CMD
#   expect: TEXT    what the block's commands print includes TEXT
#   status: N       they exit with N (default 0)
#   output: CMD     the block is what CMD prints (compared line by line)
#   no-test: WHY    not run here (several hosts, Slurm, too long): listed
# Without a comment a shell block (```sh, a man page's example) runs, a C
# block without a main is a fragment (counted), a plain block is sample
# output (counted), and a C block with a main or any other block is an
# error: a complete example must say how it is checked or why it is not.
# A sample message that cites a line of a program of tests/tc/where/
# (stuck.tc:20) must cite the line that holds what it names there, and no
# link or ../ path of a page may lead out of the repository.
# DOCS_VERBOSE=1 shows what each block printed.
set -euo pipefail
cd "$(dirname "$0")/.."
root=$(pwd)
BUILD=${BUILD:-build}
build=$(cd "$BUILD" && pwd)
tmp=$(mktemp -d "${TMPDIR:-/tmp}/earth-docs.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
home="$tmp/home" work="$tmp/work"
mkdir -p "$home" "$work"
# The reader's folder: the clone's files, the build included.
for f in "$root"/* "$root"/.clang-format; do
	[ -e "$f" ] || continue
	[ "$(basename "$f")" = "$(basename "$BUILD")" ] && continue
	ln -s "$f" "$work/$(basename "$f")"
done
ln -s "$build" "$work/build"
# As a reader who followed README.md's "Install" into $HOME/earth.
if ! make --no-print-directory -s install PREFIX="$home/earth" DESTDIR= \
	BUILD="$BUILD" >"$tmp/install.log" 2>&1; then
	cat "$tmp/install.log"
	echo "test-docs: FAILED: make install PREFIX=$home/earth" >&2
	exit 1
fi

HOME="$home" PATH="$home/earth/bin:$PATH" \
	PKG_CONFIG_PATH="$home/earth/lib/pkgconfig" EARTH_BUILD="$build" \
	DOCS_WORK="$work" DOCS_ROOT="$root" python3 - "$@" <<'PY'
import glob, os, re, subprocess, sys, time

root, work = os.environ["DOCS_ROOT"], os.environ["DOCS_WORK"]
pages = (["README.md"] + sorted(glob.glob("docs/*.md")) +
         sorted(glob.glob("man/man1/*.1")) + sorted(glob.glob("man/man3/*.3")))


def roff_text(line):
    for a, b in (("\\-", "-"), ("\\(dq", '"'), ("\\&", ""), ("\\e", "\\")):
        line = line.replace(a, b)
    return line


def blocks_of(page):
    """(line, info, clauses, body) of every block of a page."""
    lines = open(page).read().split("\n")
    man = not page.endswith(".md")
    out, i = [], 0
    while i < len(lines):
        if man:
            start = lines[i].strip() == ".EX"
            info = "sh"
        else:
            m = re.match(r"^\s*```(\S*)\s*$", lines[i])
            start, info = bool(m), (m.group(1) if m else "")
        if not start:
            i += 1
            continue
        j = i + 1
        while j < len(lines) and not (
                lines[j].strip() == ".EE" if man
                else re.match(r"^\s*```\s*$", lines[j])):
            j += 1
        body = lines[i + 1:j]
        if man:
            body = [roff_text(l) for l in body]
        k = i - 1
        while k >= 0 and (lines[k].strip() == "" or lines[k] in (".PP",)):
            k -= 1
        note = ""
        m = re.match(r"^<!-- docs-test: (.*) -->$", lines[k]) if k >= 0 else None
        if man and k >= 0:
            m = re.match(r'^\.\\" docs-test: (.*)$', lines[k])
        if m:
            note = m.group(1)
        clauses = {}
        for c in (x.strip() for x in note.split(" ;; ") if x.strip()):
            if c.startswith("file "):
                clauses["file"] = c[5:].strip()
            else:
                key, _, val = c.partition(":")
                clauses.setdefault(key.strip(), []).append(val.strip())
        out.append((i + 1, info, clauses, "\n".join(body) + "\n"))
        i = j + 1
    return out


def run(cmd, limit=180):
    t0 = time.time()
    try:
        p = subprocess.run(["bash", "-eo", "pipefail", "-c", cmd], cwd=work,
                           stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                           stderr=subprocess.STDOUT, timeout=limit)
        return p.returncode, p.stdout.decode(errors="replace"), time.time() - t0
    except subprocess.TimeoutExpired as e:
        out = (e.stdout or b"").decode(errors="replace")
        return 124, out + "\n(stopped after %d s)" % limit, time.time() - t0


failures, skipped, counts = [], [], {"run": 0, "file": 0, "output": 0,
                                      "fragment": 0, "sample": 0, "cited": 0}
plan = [(p, b) for p in pages for b in blocks_of(p)]

# The docs stand alone: every link and ../ path of a page names a file of
# the repository (from the page's folder or the top), none outside it
# (such as ../shared/notes/).
for page in pages:
    if not page.endswith(".md"):
        continue
    text = open(page).read()
    for m in re.finditer(r"\]\(([^)#\s]+)|`(\.\./[^`\s]+)`", text):
        ref = m.group(1) or m.group(2)
        if re.match(r"^[a-z]+:", ref):
            continue
        here = [os.path.normpath(os.path.join(root, d, ref))
                for d in (os.path.dirname(page), ".")]
        if not any((p + "/").startswith(root + "/") and os.path.exists(p)
                   for p in here):
            failures.append("%s:%d: %s is not a file of the repository: the "
                            "docs must stand alone" %
                            (page, text[:m.start()].count("\n") + 1, ref))

# Sample messages that cite a line of a program in tests/tc/where/ (whose
# messages tests/t_tc_where.c checks): the line holds what the message says
# is there (the operation, the INIT_SYNC, the fiber's label).
WHERE = "tests/tc/where/"
CITES = [  # (regex, group of the word, group of the file, group of the line)
    (r"(\w+\.tc):(\d+) in \w+, fiber \w+: ([A-Z][A-Z_0-9]+)", 3, 1, 2),
    (r"([A-Z][A-Z_0-9]+) from node \d+ \((\w+\.tc):(\d+)", 1, 2, 3),
    (r"([A-Z][A-Z_0-9]+) at (\w+\.tc):(\d+)", 1, 2, 3),
    (r"fiber (\w+) of \w+ \((\w+\.tc):(\d+)", 1, 2, 3),
]
for page, (line, info, cl, body) in plan:
    if info != "":
        continue
    for text in body.split("\n"):
        checked = set()
        for rx, gw, gf, gl in CITES:
            for m in re.finditer(rx, text):
                name, n, word = m.group(gf), int(m.group(gl)), m.group(gw)
                checked.add((name, n))
                src = os.path.join(root, WHERE, name)
                if not os.path.exists(src):
                    continue
                counts["cited"] += 1
                lines = open(src).read().split("\n")
                got = lines[n - 1] if 0 < n <= len(lines) else ""
                if word not in got:
                    failures.append(
                        "%s:%d: the sample cites %s:%d for %s, but that line "
                        "is %r" % (page, line, name, n, word, got.strip()))
        for m in re.finditer(r"(\w+\.tc):(\d+)", text):
            if ((m.group(1), int(m.group(2))) not in checked and
                    os.path.exists(os.path.join(root, WHERE, m.group(1)))):
                failures.append("%s:%d: %s:%s cited in a way docs.sh cannot "
                                "check: say what is at that line as the "
                                "runtime does" % (page, line, m.group(1),
                                                  m.group(2)))
# Pass 1: the files the reader saves.
for page, (line, info, cl, body) in plan:
    if "file" in cl and "no-test" not in cl:
        with open(os.path.join(work, cl["file"]), "w") as f:
            f.write(body)
# Pass 2: every block in page order.
for page, (line, info, cl, body) in plan:
    where = "%s:%d" % (page, line)
    if "no-test" in cl:
        skipped.append("%s: %s" % (where, "; ".join(cl["no-test"])))
        continue
    cmd, what = None, None
    if "output" in cl:
        cmd = cl["output"][0]
        rc, out, secs = run(cmd)
        counts["output"] += 1
        want = [l.rstrip() for l in body.strip("\n").split("\n")]
        got = [l.rstrip() for l in out.strip("\n").split("\n")]
        if rc != 0 or want != got:
            diff = [f"  page: {a!r}\n  says: {b!r}" for a, b in zip(want, got)
                    if a != b][:3]
            failures.append("%s: the block is not what `%s` prints (status %d;"
                            " %d lines shown, %d printed)\n%s" %
                            (where, cmd, rc, len(want), len(got),
                             "\n".join(diff)))
        continue
    if "file" in cl:
        counts["file"] += 1
        if "then" not in cl:
            continue
        cmd = " && ".join(cl["then"])
    elif info in ("sh", "bash", "console"):
        cmd = body
    elif info == "c" and not re.search(r"\bmain\s*\(", body):
        counts["fragment"] += 1
        continue
    elif info == "":
        counts["sample"] += 1
        continue
    else:
        failures.append("%s: a ```%s block with no docs-test comment: say how "
                        "it is checked (file NAME ;; then: CMD) or why not "
                        "(no-test: WHY)" % (where, info))
        continue
    counts["run"] += 1
    rc, out, secs = run(cmd)
    want_rc = int(cl.get("status", ["0"])[0])
    bad = []
    if rc != want_rc:
        bad.append("status %d, the page implies %d" % (rc, want_rc))
    for e in cl.get("expect", []):
        if e not in out:
            bad.append("no %r in what it printed" % e)
    print("docs: %-28s %5.1f s %s" % (where, secs, "ok" if not bad else
                                      "FAILED"), flush=True)
    if os.environ.get("DOCS_VERBOSE"):
        print("\n".join("    | " + l for l in out.rstrip("\n").split("\n")))
    if bad:
        tail = "\n".join(out.rstrip("\n").split("\n")[-25:])
        failures.append("%s: %s\n  ran:\n%s\n  it printed (last lines):\n%s" %
                        (where, "; ".join(bad),
                         "\n".join("    " + l for l in cmd.strip().split("\n")),
                         "\n".join("    " + l for l in tail.split("\n"))))

print("docs: %d command blocks run, %d files saved, %d blocks compared with "
      "what prints them, %d lines of tests/tc/where/ that sample messages "
      "cite checked; %d C fragments and %d sample outputs not run" %
      (counts["run"], counts["file"], counts["output"], counts["cited"],
       counts["fragment"], counts["sample"]))
print("docs: not run here (marked no-test in the page):")
for s in skipped:
    print("  " + s)
if failures:
    for f in failures:
        print("docs: FAILED: " + f, file=sys.stderr)
    print("test-docs: FAILED: %d of the docs' examples" % len(failures),
          file=sys.stderr)
    sys.exit(1)
print("test-docs: every example ran as the docs say")
PY
