#!/usr/bin/env python3
"""Fail on an include that points up or across the layers of src/, or on a library a layer
must not include.

    python3 scripts/check_layers.py            # checks src/, prints one line per violation
    python3 scripts/check_layers.py DIR        # checks DIR, a copy of src/ (tests/check_layers_test.py)

Data flows one way (docs/development.md, "Code layout"): each layer below may include only the layers
listed for it, and itself. The compiler refuses such an include too (each layer's include
root, build/layers/NAME/, holds only it and the layers below it: CMakeLists.txt); this check
(run by ctest as `layers`) reads every file, built or not, and names the rule it breaks. A
library such as nlohmann/json is visible to every layer above io, so the compiler cannot refuse
it where it does not belong: REFUSED_LIBRARIES says where, and why (and likewise a header of a
layer below that a layer must not use: report neither loads a model nor writes a file).
"""

import os
import re
import stat

import script_io

# The layers under inference, and so under train, interp and report too (distributed is train's alone).
BELOW_INFERENCE = {"core", "model_spec", "tensor", "kernels", "autograd", "nn", "optim", "data", "io"}
# layer -> the layers its files may include (besides its own)
ALLOWED = {
    "core": set(),
    "model_spec": {"core"},
    "tensor": {"core"},
    "kernels": {"core", "tensor"},
    "autograd": {"core", "tensor", "kernels"},
    "nn": {"core", "model_spec", "tensor", "kernels", "autograd"},
    "optim": {"core", "model_spec", "tensor", "kernels", "autograd", "nn"},
    "data": {"core"},
    "distributed": {"core"},
    "io": {"core", "model_spec", "tensor", "data"},
    # What the commands do: loading, evaluation and generation; training over them; the
    # interpretability techniques (structs only) over inference, never over train; the writers
    # of text, JSON, SVG and HTML over the techniques. Only cli joins train to interp and report.
    "inference": BELOW_INFERENCE,
    "train": BELOW_INFERENCE | {"inference", "distributed"},
    "interp": BELOW_INFERENCE | {"inference"},
    "report": BELOW_INFERENCE | {"inference", "interp"},
    # A request of inspect-heads (its options, parsed once for the command line and the server,
    # and the table of modes: each a technique of interp written by report) over report; never
    # train, serve or cli.
    "request": BELOW_INFERENCE | {"inference", "interp", "report"},
    # The server (`mini-gpt serve`) over request; it never includes train (its one contact with
    # a run is reading metrics.jsonl and the checkpoint, serve/run_watch), nor train it.
    "serve": BELOW_INFERENCE | {"inference", "interp", "report", "request"},
    "cli": BELOW_INFERENCE | {"distributed", "inference", "train", "interp", "report", "request", "serve"},
}
# layer -> {the start of a header path it must not include: why}
REFUSED_LIBRARIES = {
    "interp": {"nlohmann/": "interp returns structs and never text; their JSON is report's"},
    # Report only writes: the model a writer's struct came from was loaded, and the file its
    # bytes go to is written, above it (request, cli).
    "report": {"inference/model_store.h": "report only writes: loading a model is request's",
               "io/atomic_file.h": "report returns bytes: writing the file is the caller's"},
    # The request layer returns what to print and what to write; the transports do it.
    "request": {"iostream": "request never prints: a mode returns its output to cli or serve",
                "cstdio": "request never prints: a mode returns its output to cli or serve"},
}
MAX_SOURCE_BYTES = 16 << 20  # a source file larger than this is none of ours
INCLUDE = re.compile(r'^\s*#\s*include\s*[<"]([a-z_]+)/[^">]+[">]', re.MULTILINE)
ANY_INCLUDE = re.compile(r'^\s*#\s*include\s*([<"])([^">]+)[">]', re.MULTILINE)


def line_of(text, match):
    return text.count("\n", 0, match.start()) + 1


def source_files(root, layer):
    """The layer's .h and .cpp files: regular files, or links to regular files inside ROOT.
    Anything else is skipped, never read: a FIFO would block, a link to /dev/zero or out of
    the tree would read without end or read another tree. Links to folders are not walked."""
    for folder, _, names in os.walk(os.path.join(root, layer)):
        for name in sorted(names):
            if not name.endswith((".h", ".cpp")):
                continue
            path = os.path.join(folder, name)
            real = os.path.realpath(path)
            if os.path.commonpath([real, os.path.realpath(root)]) != os.path.realpath(root):
                continue
            try:
                if not stat.S_ISREG(os.stat(real).st_mode):
                    continue
            except OSError:
                continue
            yield path


def main():
    parser = script_io.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("dir", nargs="?", help="a copy of src/ to check (default: this repository's src/)")
    args = parser.parse_args()
    root = os.path.normpath(args.dir if args.dir is not None else
                            os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "src"))
    if not os.path.isdir(root):
        raise script_io.ScriptError(f"{script_io.quoted(root)} is not a folder (give a copy of src/)")
    violations, files = [], 0
    for layer in sorted(os.listdir(root)):
        if not os.path.isdir(os.path.join(root, layer)) or os.path.islink(os.path.join(root, layer)):
            continue
        if layer not in ALLOWED:
            violations.append(f"src/{layer}/: a folder that is no layer of the map in scripts/check_layers.py")
            continue
        for path in source_files(root, layer):
            files += 1
            text = script_io.read_text(path, "source file", MAX_SOURCE_BYTES)
            rel = os.path.relpath(path, os.path.dirname(root))
            for match in INCLUDE.finditer(text):
                target = match.group(1)
                if target == layer or target not in ALLOWED:  # own layer, or a library (oneapi/...)
                    continue
                if target not in ALLOWED[layer]:
                    violations.append(f"{rel}:{line_of(text, match)}: {layer} includes {target}/ (allowed: "
                                      f"{', '.join(sorted(ALLOWED[layer])) or 'nothing below it'})")
            for match in ANY_INCLUDE.finditer(text):
                header = match.group(2)
                for prefix, why in REFUSED_LIBRARIES.get(layer, {}).items():
                    if header.startswith(prefix):
                        shown = f"<{header}>" if match.group(1) == "<" else f'"{header}"'
                        violations.append(f"{rel}:{line_of(text, match)}: {layer} includes {shown} ({why})")
    for v in violations:
        print(f"check_layers: {v}")
    print(f"check_layers: {files} files, {len(violations)} upward, sideways or refused includes")
    return 1 if violations else 0


if __name__ == "__main__":
    script_io.run_main("check_layers", main)
