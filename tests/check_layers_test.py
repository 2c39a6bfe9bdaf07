#!/usr/bin/env python3
"""scripts/check_layers.py refuses what it should: on a copy of src/, each kind of violation
is planted alone and the check must exit 1 with a line naming the file, the line and the rule.

    python3 tests/check_layers_test.py              # the repository's src/
    python3 tests/check_layers_test.py SOURCE_DIR   # another checkout's

The kinds (docs/development.md, "Code layout"): interp including train/ (the two never include
each other: only cli joins them), train including interp/, serve including train/ and train
including serve/ (a run is followed by reading its files, serve/run_watch), report including
request/ (report only writes: the requests are above it), request including serve/ or train/
(the request layer is under the server and never joins training), and interp
including nlohmann/json (interp returns structs; their JSON is report's). The untouched copy must pass, so that a
refusal is the planted line's and not the tree's.
"""

import os
import shutil
import subprocess
import sys
import tempfile

ROOT = os.path.abspath(sys.argv[1] if len(sys.argv) > 1 else os.path.join(os.path.dirname(__file__), ".."))
CHECK = os.path.join(ROOT, "scripts", "check_layers.py")

# (what is planted, file of src/ it goes into, the include, the refusal's expected line)
PLANTS = [
    ("interp includes train/", "interp/roles.cpp", '#include "train/train.h"',
     "src/interp/roles.cpp:{line}: interp includes train/ (allowed: autograd, core, data, inference, io, kernels, "
     "model_spec, nn, optim, tensor)"),
    ("train includes interp/", "train/evaluation.cpp", '#include "interp/roles.h"',
     "src/train/evaluation.cpp:{line}: train includes interp/ (allowed: autograd, core, data, distributed, "
     "inference, io, kernels, model_spec, nn, optim, tensor)"),
    ("serve includes train/", "serve/run_watch.cpp", '#include "train/train.h"',
     "src/serve/run_watch.cpp:{line}: serve includes train/ (allowed: autograd, core, data, inference, interp, io, "
     "kernels, model_spec, nn, optim, report, request, tensor)"),
    ("report includes request/", "report/roles_format.cpp", '#include "request/inspect_modes.h"',
     "src/report/roles_format.cpp:{line}: report includes request/ (allowed: autograd, core, data, inference, interp, "
     "io, kernels, model_spec, nn, optim, tensor)"),
    ("request includes serve/", "request/subject.cpp", '#include "serve/api.h"',
     "src/request/subject.cpp:{line}: request includes serve/ (allowed: autograd, core, data, inference, interp, io, "
     "kernels, model_spec, nn, optim, report, tensor)"),
    ("request includes train/", "request/inspect_modes.cpp", '#include "train/train.h"',
     "src/request/inspect_modes.cpp:{line}: request includes train/ (allowed: autograd, core, data, inference, "
     "interp, io, kernels, model_spec, nn, optim, report, tensor)"),
    ("train includes serve/", "train/train.cpp", '#include "serve/run_watch.h"',
     "src/train/train.cpp:{line}: train includes serve/ (allowed: autograd, core, data, distributed, "
     "inference, io, kernels, model_spec, nn, optim, tensor)"),
    ("report includes the model loader", "report/explorer.cpp", '#include "inference/model_store.h"',
     "src/report/explorer.cpp:{line}: report includes \"inference/model_store.h\" (report only writes: loading a model "
     "is request's)"),
    ("request prints", "request/inspect_modes.cpp", "#include <cstdio>",
     "src/request/inspect_modes.cpp:{line}: request includes <cstdio> (request never prints: a mode returns its "
     "output to cli or serve)"),
    ("interp includes nlohmann/json", "interp/trace.h", "#include <nlohmann/json.hpp>",
     "src/interp/trace.h:{line}: interp includes <nlohmann/json.hpp> (interp returns structs and never text; "
     "their JSON is report's)"),
]


def check(src):
    proc = subprocess.run([sys.executable, CHECK, src], capture_output=True, text=True)
    return proc.returncode, proc.stdout + proc.stderr


def plant(path, include):
    """Adds INCLUDE after the file's first #include (or #pragma once); returns its line number."""
    with open(path, encoding="utf-8") as f:
        lines = f.read().split("\n")
    at = next(i for i, line in enumerate(lines) if line.startswith(("#include", "#pragma once"))) + 1
    lines.insert(at, include)
    with open(path, "w", encoding="utf-8") as f:
        f.write("\n".join(lines))
    return at + 1


def planted_failures():
    """Plants each violation in its own copy of src/; returns what went wrong, one line each."""
    failures = []
    with tempfile.TemporaryDirectory(prefix="check-layers-") as work:
        clean = os.path.join(work, "clean", "src")
        shutil.copytree(os.path.join(ROOT, "src"), clean)
        status, out = check(clean)
        print(f"the untouched copy: exit {status}\n  {out.strip()}")
        if status != 0:
            failures.append(f"the untouched copy of src/ is refused (exit {status}):\n{out}")
        for index, (what, rel, include, expected) in enumerate(PLANTS):
            src = os.path.join(work, f"plant{index}", "src")
            shutil.copytree(os.path.join(ROOT, "src"), src)
            line = plant(os.path.join(src, rel), include)
            status, out = check(src)
            wanted = "check_layers: " + expected.format(line=line)
            print(f"planted: {what} ({include} into src/{rel}:{line}): exit {status}\n  " +
                  "\n  ".join(out.strip().splitlines()))
            if status != 1:
                failures.append(f"{what}: exit {status}, not 1")
            if wanted not in out.splitlines():
                failures.append(f"{what}: no line\n  {wanted}\nin\n{out}")
            if "1 upward, sideways or refused includes" not in out:
                failures.append(f"{what}: not exactly one refusal:\n{out}")
    return failures


def main():
    failures = planted_failures()
    lines = [f"FAILED: {failure}" for failure in failures]
    lines.append(f"check_layers_test: {len(PLANTS)} planted violations, {len(failures)} failures")
    print("\n".join(lines))
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
