#!/usr/bin/env python3
"""`make test`'s runner: every test binary of the workspace, JOBS at a time.

`cargo test` runs the binaries one after another, and a binary whose time
is one long test leaves the other core idle. This runs the binaries cargo
built (`cargo test --no-run --message-format=json`) from their package's
folder, as cargo does, the longest first by the times of the last run
(kept in --times), and prints each binary's output whole when it ends, so
that outputs never interleave. Then the doc tests, through cargo. Exit 1
if any binary failed (their names are listed last), and a table of the
binaries' wall and CPU seconds goes to --report.
"""
import argparse
import json
import os
import subprocess
import sys
import tempfile
import threading
import time


def binaries(cargo, cargo_args):
    out = subprocess.run(
        [cargo, "test", *cargo_args, "--no-run", "--message-format=json-render-diagnostics"],
        stdout=subprocess.PIPE,
        check=True,
        text=True,
    ).stdout
    found = []
    for line in out.splitlines():
        try:
            m = json.loads(line)
        except json.JSONDecodeError:
            continue
        if m.get("reason") != "compiler-artifact" or not m.get("profile", {}).get("test") or not m.get("executable"):
            continue
        t = m["target"]
        kind = "unittests" if t["kind"] != ["test"] else "tests/" + os.path.basename(t["src_path"])
        pkg = os.path.dirname(m["manifest_path"])
        found.append({"name": f"{os.path.basename(pkg)} {kind}", "exe": m["executable"], "dir": pkg})
    return found


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--cargo", default="cargo")
    ap.add_argument("--jobs", type=int, default=os.cpu_count() or 2)
    ap.add_argument("--times", required=True, help="JSON of the last run's seconds per binary")
    ap.add_argument("--report", required=True)
    ap.add_argument("cargo_args", nargs="*", help="after --: cargo test's arguments (--release --workspace)")
    a = ap.parse_args()
    bins = binaries(a.cargo, a.cargo_args)
    assert bins, "cargo built no test binaries"
    try:
        last = json.load(open(a.times))
    except (OSError, ValueError):
        last = {}
    # unknown binaries first: a new test file may be long
    bins.sort(key=lambda b: -last.get(b["name"], 1e9))
    lock = threading.Lock()
    results = {}
    queue = list(bins)

    def worker():
        while True:
            with lock:
                if not queue:
                    return
                b = queue.pop(0)
            with tempfile.TemporaryFile() as log:
                start = time.time()
                # as cargo test: tests find the workspace at run time
                env = dict(os.environ, CARGO_MANIFEST_DIR=b["dir"])
                p = subprocess.Popen([b["exe"]], cwd=b["dir"], env=env, stdout=log, stderr=subprocess.STDOUT)
                _, status, ru = os.wait4(p.pid, 0)
                wall = time.time() - start
                code = os.waitstatus_to_exitcode(status)
                log.seek(0)
                text = log.read().decode(errors="replace")
            with lock:
                results[b["name"]] = (code, wall, ru.ru_utime + ru.ru_stime)
                sys.stdout.write(f"     Running {b['name']} ({b['exe']})\n{text}")
                sys.stdout.write(f"     ({b['name']}: {wall:.1f} s, exit {code})\n")
                sys.stdout.flush()

    start = time.time()
    threads = [threading.Thread(target=worker) for _ in range(max(1, a.jobs))]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    wall = time.time() - start
    doc = subprocess.run([a.cargo, "test", *a.cargo_args, "--doc"]).returncode
    failed = sorted(n for n, (code, _, _) in results.items() if code != 0)
    os.makedirs(os.path.dirname(os.path.abspath(a.report)), exist_ok=True)
    with open(a.report, "w") as f:
        cpu = sum(r[2] for r in results.values())
        f.write(f"# test binaries: {len(results)}, {a.jobs} at a time, {wall:.0f} s wall, {cpu:.0f} s CPU\n")
        f.write("# seconds   wall    cpu  binary (constraints/run_tests.py)\n")
        for n, (code, w, c) in sorted(results.items(), key=lambda kv: -kv[1][1]):
            f.write(f"          {w:6.1f} {c:6.1f}  {n}{'  FAILED' if code else ''}\n")
    if not failed:
        os.makedirs(os.path.dirname(os.path.abspath(a.times)), exist_ok=True)
        json.dump({n: r[1] for n, r in results.items()}, open(a.times, "w"), indent=0, sort_keys=True)
    print(f"test binaries: {len(results)} run, {len(failed)} failed, {wall:.0f} s ({a.report})")
    if failed or doc != 0:
        for n in failed:
            print(f"FAILED: {n}")
        if doc != 0:
            print("FAILED: doc tests")
        sys.exit(1)


if __name__ == "__main__":
    main()
