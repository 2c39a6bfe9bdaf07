#!/usr/bin/env python3
"""Writes the fuzz targets' seed corpora into tests/fuzz/<target>/ (standard library only).

The seeds are committed; run this again only to regenerate them after a format change:
    python3 tests/fuzz/make_seeds.py
checkpoint/: tiny valid checkpoints (docs/checkpoint.md): rope and learned positions, with
and without AdamW moments, with and without data_sha256, tensors in and out of order.
config/: configs with and without "section.key=value" overrides after a "%%" line.
utf8/: valid and invalid UTF-8 (each kind of ill-formed sequence), some with a query
after a 0xFF byte (see utf8_fuzzer.cpp).
"""
import hashlib
import json
import pathlib
import struct

HERE = pathlib.Path(__file__).resolve().parent


def config(position="rope", n_embd=2, n_head=1, vocab_size=3, block_size=4):
    return {
        "model": {"vocab_size": vocab_size, "n_layer": 1, "n_embd": n_embd, "n_head": n_head,
                  "block_size": block_size, "position": position, "rope_base": 10000.0,
                  "mlp_ratio": 1, "dropout": 0.0, "norm_eps": 1e-5},
        "train": {"batch_size": 2, "max_steps": 10, "lr": 0.001, "min_lr": 0.0001, "warmup_steps": 1,
                  "weight_decay": 0.1, "beta1": 0.9, "beta2": 0.99, "eps": 1e-8, "grad_clip": 1.0,
                  "eval_interval": 5, "eval_batches": 1, "checkpoint_interval": 5, "seed": 1,
                  "out_dir": "/tmp/run", "threads": 1, "backend": ""},
        "data": {"path": "/tmp/corpus.txt", "val_fraction": 0.1, "probe_path": ""},
    }


def parameter_shapes(cfg):
    m = cfg["model"]
    d, v, f = m["n_embd"], m["vocab_size"], m["mlp_ratio"] * m["n_embd"]
    shapes = [("tok_emb.weight", [v, d])]
    if m["position"] == "learned":
        shapes.append(("pos_emb.weight", [m["block_size"], d]))
    for i in range(m["n_layer"]):
        b = f"blocks.{i}."
        shapes += [(b + "ln1.weight", [d]), (b + "ln1.bias", [d])]
        shapes += [(b + f"attn.{p}.weight", [d, d]) for p in ("q_proj", "k_proj", "v_proj", "out_proj")]
        shapes += [(b + "ln2.weight", [d]), (b + "ln2.bias", [d]), (b + "mlp.fc.weight", [f, d]),
                   (b + "mlp.fc.bias", [f]), (b + "mlp.proj.weight", [d, f]), (b + "mlp.proj.bias", [d])]
    return shapes + [("ln_f.weight", [d]), ("ln_f.bias", [d]), ("head.weight", [v, d])]


def checkpoint(cfg, vocab, moments=False, checksum=True, reverse=False, step=7):
    shapes = parameter_shapes(cfg)
    if moments:
        shapes += [(p + n, s) for p in ("optim.exp_avg.", "optim.exp_avg_sq.") for n, s in shapes]
    header, data = {}, b""
    for k, (name, shape) in enumerate(reversed(shapes) if reverse else shapes):
        count = 1
        for s in shape:
            count *= s
        values = [((k * 31 + j * 7) % 13 - 6) / 8.0 for j in range(count)]  # small exact floats
        header[name] = {"dtype": "F32", "shape": shape, "data_offsets": [len(data), len(data) + 4 * count]}
        data += struct.pack(f"<{count}f", *values)
    metadata = {"format": "mini-gpt", "format_version": "1", "config": json.dumps(cfg),
                "vocab": json.dumps(vocab, ensure_ascii=False), "step": str(step)}
    if checksum:
        metadata["data_sha256"] = hashlib.sha256(data).hexdigest()
    text = json.dumps({"__metadata__": metadata, **header}, ensure_ascii=False, separators=(",", ":"))
    raw = text.encode("utf-8")
    raw += b" " * (-len(raw) % 8)
    return struct.pack("<Q", len(raw)) + raw + data


def with_header_prefix(file, prefix):
    """The checkpoint FILE with PREFIX inserted at the start of its header object."""
    n = struct.unpack("<Q", file[:8])[0]
    header = file[8:8 + n].rstrip(b" ").replace(b"{", b"{" + prefix, 1)
    header += b" " * (-len(header) % 8)
    return struct.pack("<Q", len(header)) + header + file[8 + n:]


def write(target, name, content):
    folder = HERE / target
    folder.mkdir(exist_ok=True)
    (folder / name).write_bytes(content if isinstance(content, bytes) else content.encode("utf-8"))


def main():
    write("checkpoint", "rope", checkpoint(config(), ["\n", "a", "高"]))
    # A number beyond the double range in the header: nlohmann's out_of_range 406, which
    # once escaped the reader as an exception other than InputError (exit 1).
    write("checkpoint", "number_overflow", with_header_prefix(checkpoint(config(), ["\n", "a", "高"]), b'"x":1e400,'))
    write("checkpoint", "learned_reversed", checkpoint(config("learned"), ["a", "b", "c"], reverse=True))
    write("checkpoint", "moments", checkpoint(config(), [" ", "小", "谁"], moments=True, step=123))
    write("checkpoint", "no_checksum", checkpoint(config(n_embd=4, n_head=2, vocab_size=2), ["x", "y"],
                                                  checksum=False))

    full = json.dumps(config(), indent=1)
    write("config", "empty", "{}")
    write("config", "full", full)
    write("config", "sections", '{"model": {"n_layer": 2, "n_embd": 32, "n_head": 4, "position": "learned"},'
                                ' "train": {"lr": 3e-4, "max_steps": 1e4, "seed": 18446744073709551615},'
                                ' "data": {"path": "../data/corpus.txt", "probe_path": "probe.jsonl"}}')
    write("config", "overrides", '{"train": {"lr": 0.01}}\n%%\ntrain.lr=3e-4\nmodel.n_head=4\n'
                                 'train.out_dir=runs/x\ndata.path="a b.txt"\ntrain.backend=onednn\n'
                                 'model.position=learned\ntrain.seed=1e3')
    write("config", "bad_overrides", '{}\n%%\ntrain.lrr=1\nmodel.n_embd=63\nnodot=1\ntrain.lr\n'
                                     'model.dropout=1\ntrain.min_lr=-0\ntrain.threads=1.5')
    write("config", "bad_json", '{"model": {"n_layer": 4,\n  "n_embd": 64,}\n}')
    write("config", "wrong_types", '{"model": {"n_layer": "4", "dropout": null}, "train": [], "extra": {}}')

    write("utf8", "ascii", "hello, world\n")
    write("utf8", "mixed", "小彭买了黑色的花瓶。é ß € 𝄞 \U0010FFFF")
    write("utf8", "query", "abc小高\n".encode() + b"\xff" + "高a小c".encode())
    write("utf8", "query_unknown", "abc".encode() + b"\xff" + "abd".encode())
    write("utf8", "symbols", "\n".join([" ", "a", "z", "é", "高", "𝄞"]))
    write("utf8", "symbols_unsorted", "\n".join(["b", "a", "ab"]))
    write("utf8", "invalid_kinds", b"ok \x80 \xc0\xaf \xe0\x80\xaf \xed\xa0\x80 \xf4\x90\x80\x80 \xf5 \xe4\xb8")
    write("utf8", "truncated", "高".encode()[:2])
    write("utf8", "surrogate", b"a\xed\xbf\xbf")


if __name__ == "__main__":
    main()
