#!/usr/bin/python3
"""mini-gpt's own PyTorch reference: the model of docs/model.md, the checkpoint of
section 2, and the optimizer and schedule of src/optim/adamw.cpp and src/train/train.cpp,
written with nothing but torch, numpy and the standard library.

Run it with Debian's interpreter, /usr/bin/python3 (`bash scripts/setup_reference.sh`
installs python3-torch and python3-numpy). Nothing in the test suite needs it.

    /usr/bin/python3 scripts/torch_reference.py fixtures --out tests/fixtures
    /usr/bin/python3 scripts/torch_reference.py write-checkpoint --config configs/default.json --out fresh.safetensors
    /usr/bin/python3 scripts/torch_reference.py heads --checkpoint CKPT --text 小丁拿着红色的苹果。
    /usr/bin/python3 scripts/torch_reference.py loss --checkpoint CKPT --text-file VAL
    /usr/bin/python3 scripts/torch_reference.py greedy --checkpoint CKPT --prompt 小丁 --max-new-tokens 200
    /usr/bin/python3 scripts/torch_reference.py train-bench --config configs/default.json --threads 2
    /usr/bin/python3 scripts/torch_reference.py sample-bench --config configs/default.json --kv-cache
    /usr/bin/python3 scripts/torch_reference.py circuits --cases '[{"checkpoint": CKPT, "text": T, "answer": A, "against": B, "corrupt": T2}]'

fixtures      writes tests/fixtures/golden_rope.safetensors and golden_learned.safetensors:
              a small model's initial parameters, a batch of corpus windows, the logits,
              the loss, every parameter's gradient, and the first AdamW steps' losses,
              learning rates and gradient norms (tests/golden_test.cpp checks mini-gpt
              against them).
write-checkpoint  a freshly initialised model as a mini-gpt checkpoint (docs/checkpoint.md):
              the config's model keys (docs/config.md's defaults fill the rest) and its own train section,
              the vocabulary of --vocab-file, --vocab-text or the config's corpus, step 0.
              --init torch-nn draws as a model built from torch.nn modules does (the seeded
              generator first makes nn.Embedding's and nn.Linear's default draws, then docs/model.md's
              init); --qk-scale F multiplies every q_proj and k_proj weight by F;
              --no-data-sha256 leaves the checksum out. Prints one JSON line, with the file's
              SHA-256 and tok_emb_first_bits, tok_emb_sum and abs_sum to check it by.
              tests/inspect_test.cpp and tests/checkpoint_test.cpp give the exact commands of
              the heads_ref* and reference_tiny fixtures.
heads         inspect-heads' JSON (docs/cli.md) for a checkpoint and a text: each head's
              projected_weights (exact float32 values) and summary (mean_entropy, top_offset,
              top_offset_share, first_share, importance, ablated_loss; losses in float64 from the
              float32 logits). --layer / --head narrow it as inspect-heads does.
loss          eval's deterministic figure (docs/cli.md): windows at 0, T, 2T, ... of a text
              file, mean cross-entropy over all their predictions; one JSON line
              {"loss", "predictions", "windows", "symbols", "dtype"}. The forward is float32
              (--dtype float64 for a reference free of float32 rounding); the cross-entropy and
              the mean are float64.
greedy        greedy generation as `mini-gpt sample --temperature 0` prints it: the prompt, then
              each arg-max symbol (a tie goes to the lowest id), each predicted by a fresh forward
              over the last block_size symbols; an empty prompt starts from the newline
              symbol (or id 0), unprinted. Compare with `diff` against mini-gpt's output.
train-bench   times training steps (forward, mean cross-entropy, backward, global-norm
              clipping, AdamW with the warm-up + cosine schedule) on the config's shapes;
              prints one JSON line (tokens_per_s, ms_per_step, params, achieved GFLOP/s, ...,
              and openblas_core: openblas_get_corename() of each OpenBLAS the process loaded).
sample-bench  times sampling from a freshly initialised model, one symbol at a time, with
              or without a KV cache; prints one JSON line (tokens_per_s, ...).

A config is a mini-gpt config file ({"model", "train", "data"}; docs/config.md's defaults fill what
is missing). The vocabulary size comes from the corpus at data.path when it can be read
(resolved against the config's folder, as mini-gpt does), else it is 79.
--threads K sets torch's threads and OMP/OpenBLAS's; --blas NAME re-executes the process
(same pid, so a parent's wait4 still sees its peak RSS) with that BLAS on LD_LIBRARY_PATH.
Errors print `torch_reference: error: ...` and exit with status 2.

Shapes: B batch, T positions, D width, H heads, d = D / H head width, V vocabulary.
"""

import argparse
import hashlib
import json
import math
import os
import struct
import sys
import time

import script_io

PROG = "torch_reference"
ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

# docs/config.md's model keys and src/io/config.h's training defaults. (rope_base is the
# integer 10000 so that write-checkpoint's config string reads "rope_base": 10000, as the
# committed fixtures of tests/fixtures hold it; the arithmetic takes float(rope_base).)
MODEL_DEFAULTS = {"vocab_size": 79, "n_layer": 4, "n_embd": 64, "n_head": 2, "block_size": 64, "position": "rope",
                  "rope_base": 10000, "mlp_ratio": 4, "dropout": 0.0, "norm_eps": 1e-5}
TRAIN_DEFAULTS = {"batch_size": 32, "max_steps": 5000, "lr": 1e-3, "min_lr": 1e-4, "warmup_steps": 100,
                  "weight_decay": 0.1, "beta1": 0.9, "beta2": 0.99, "eps": 1e-8, "grad_clip": 1.0, "seed": 1337}

LIB = "/usr/lib/x86_64-linux-gnu"
BLAS_PATHS = {"openblas-openmp": [LIB + "/openblas-openmp"], "openblas-pthread": [LIB + "/openblas-pthread"],
              "netlib": [LIB + "/blas", LIB + "/lapack"]}


# A bad config, option or file: one line, exit status 2 (ScriptError's default; a failed
# write is ScriptError(..., 1)). The scripts' shared helper reports both.
UsageError = script_io.ScriptError
MAX_TEXT_BYTES = 16 << 30  # mini-gpt's corpus limit; configs and prompts are far smaller
MAX_CHECKPOINT_BYTES = 16 << 30


# ----------------------------------------------------------------------------- config

def read_text(path):
    """A regular file's UTF-8 text: a FIFO or /dev/zero is refused, not waited on."""
    return script_io.read_text(path, "file", MAX_TEXT_BYTES)


def corpus_vocab(text):
    """docs/data.md, "Vocabulary": the distinct code points, sorted; id = rank."""
    return sorted(set(text))


def check_model(model):
    for key in ("vocab_size", "n_layer", "n_embd", "n_head", "block_size", "mlp_ratio"):
        if not isinstance(model[key], int) or isinstance(model[key], bool) or model[key] <= 0:
            raise UsageError(f"model.{key} must be a positive integer, found {model[key]!r}")
    if model["n_embd"] % model["n_head"]:
        raise UsageError(f"model.n_head ({model['n_head']}) does not divide model.n_embd ({model['n_embd']})")
    if model["position"] not in ("rope", "learned"):
        raise UsageError(f"model.position must be \"rope\" or \"learned\", found {model['position']!r}")
    if model["position"] == "rope" and (model["n_embd"] // model["n_head"]) % 2:
        raise UsageError("model.position \"rope\" needs an even head width")


def load_config(path):
    """A mini-gpt config file -> {"model", "train", "text" (the corpus, or None),
    "train_given" (the file's own train section, defaults not filled in)}."""
    if path is None:
        model = dict(MODEL_DEFAULTS)
        check_model(model)
        return {"model": model, "train": dict(TRAIN_DEFAULTS), "text": None, "train_given": {}}
    try:
        raw = json.loads(read_text(path))
    except json.JSONDecodeError as e:
        raise UsageError(f"{path}: invalid JSON at line {e.lineno} column {e.colno}: {e.msg}")
    if not isinstance(raw, dict):
        raise UsageError(f"{path}: a config is a JSON object")
    model = dict(MODEL_DEFAULTS)
    for key, value in raw.get("model", {}).items():
        if key not in MODEL_DEFAULTS:
            raise UsageError(f"{path}: unknown key model.{key}")
        model[key] = value
    train = dict(TRAIN_DEFAULTS)
    train.update({k: v for k, v in raw.get("train", {}).items() if k in TRAIN_DEFAULTS})
    text = None
    data_path = raw.get("data", {}).get("path", "")
    if data_path:
        full = data_path if os.path.isabs(data_path) else os.path.join(os.path.dirname(os.path.abspath(path)), data_path)
        if os.path.exists(full):
            text = read_text(full)
            model["vocab_size"] = len(corpus_vocab(text))
    check_model(model)
    return {"model": model, "train": train, "text": text, "train_given": dict(raw.get("train", {}))}


# ----------------------------------------------------------------------------- threads and BLAS

def choose_blas(name):
    """Re-executes this process with the named BLAS first on LD_LIBRARY_PATH (before torch loads)."""
    if name == "system" or os.environ.get("TORCH_REFERENCE_BLAS") == name:
        return
    dirs = BLAS_PATHS[name]
    if not os.path.exists(os.path.join(dirs[0], "libblas.so.3")):
        raise UsageError(f"--blas {name}: {dirs[0]}/libblas.so.3 is not installed")
    old = [p for p in os.environ.get("LD_LIBRARY_PATH", "").split(":") if p]
    env = dict(os.environ, TORCH_REFERENCE_BLAS=name, LD_LIBRARY_PATH=":".join(dirs + old))
    sys.stdout.flush()
    os.execve(sys.executable, [sys.executable] + sys.argv, env)


def blas_in_use():
    """The BLAS libraries this process has mapped, from /proc/self/maps."""
    found = set()
    try:
        with open("/proc/self/maps") as f:
            for line in f:
                path = line.split()[-1]
                if os.path.basename(path).startswith(("libblas", "libopenblas")):
                    found.add(os.path.realpath(path))
    except OSError:
        pass
    return sorted(found)


def import_torch(threads, blas_threads):
    """Thread counts go into the environment before OpenMP and OpenBLAS start."""
    if threads is not None:
        for var in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
            os.environ[var] = str(threads)
    if blas_threads is not None:
        os.environ["OPENBLAS_NUM_THREADS"] = str(blas_threads)
    global np, torch, F
    import numpy as np
    import torch
    import torch.nn.functional as F
    if threads is not None:
        torch.set_num_threads(threads)


# ----------------------------------------------------------------------------- the model

def parameter_shapes(m):
    """The checkpoint's tensor names and shapes, in docs/checkpoint.md's order."""
    V, D, R = m["vocab_size"], m["n_embd"], m["mlp_ratio"] * m["n_embd"]
    shapes = [("tok_emb.weight", (V, D))]
    if m["position"] == "learned":
        shapes.append(("pos_emb.weight", (m["block_size"], D)))
    for i in range(m["n_layer"]):
        b = f"blocks.{i}."
        shapes += [(b + "ln1.weight", (D,)), (b + "ln1.bias", (D,))]
        shapes += [(b + f"attn.{p}_proj.weight", (D, D)) for p in ("q", "k", "v", "out")]
        shapes += [(b + "ln2.weight", (D,)), (b + "ln2.bias", (D,)),
                   (b + "mlp.fc.weight", (R, D)), (b + "mlp.fc.bias", (R,)),
                   (b + "mlp.proj.weight", (D, R)), (b + "mlp.proj.bias", (D,))]
    shapes += [("ln_f.weight", (D,)), ("ln_f.bias", (D,)), ("head.weight", (V, D))]
    return shapes


def torch_nn_draws(m, generator):
    """Moves `generator` on by what building this model out of torch.nn modules draws before
    any of docs/model.md's initialisation (then thrown away): in parameter order, nn.Embedding's weight
    normal(0, 1); nn.Linear's weight kaiming-uniform, uniform(-1/sqrt(fan_in), 1/sqrt(fan_in)),
    and its bias uniform with the same bound; nn.LayerNorm draws nothing. A seeded
    torch.Generator draws exactly as torch's default one after torch.manual_seed."""
    fan_in = None
    for name, shape in parameter_shapes(m):
        if name.endswith("_emb.weight"):
            torch.empty(shape).normal_(0.0, 1.0, generator=generator)
        elif name.endswith(".weight") and len(shape) == 2:  # a Linear's [out, in] weight
            fan_in = shape[1]
            torch.empty(shape).uniform_(-1.0 / math.sqrt(fan_in), 1.0 / math.sqrt(fan_in), generator=generator)
        elif name.endswith(".bias") and ".mlp." in name:  # a Linear's bias: the weight just before it
            torch.empty(shape).uniform_(-1.0 / math.sqrt(fan_in), 1.0 / math.sqrt(fan_in), generator=generator)


def init_parameters(m, generator, draws="spec"):
    """docs/model.md's initialisation in float32, drawn in parameter order from `generator`:
    weights normal(0, 0.02); Wo and W2 normal(0, 0.02/sqrt(2 n_layer)); biases 0;
    LayerNorm weight 1. With draws="torch-nn" the generator first makes torch.nn's own
    default draws (torch_nn_draws), as a model built from torch.nn modules and then given
    docs/model.md's initialisation does."""
    if draws == "torch-nn":
        torch_nn_draws(m, generator)
    residual_std = 0.02 / math.sqrt(2 * m["n_layer"])
    params = {}
    for name, shape in parameter_shapes(m):
        if name.endswith(("ln1.weight", "ln2.weight")) or name == "ln_f.weight":
            t = torch.ones(shape)
        elif name.endswith(".bias"):
            t = torch.zeros(shape)
        else:
            std = residual_std if name.endswith(("attn.out_proj.weight", "mlp.proj.weight")) else 0.02
            t = torch.empty(shape).normal_(0.0, std, generator=generator)
        params[name] = t
    return params


def rope_table(positions, d, base, dtype):
    """cos, sin [positions, d/2] of p * base^(-2i/d): angles in float64, then rounded to
    float32 as docs/model.md says (and only then widened to `dtype`)."""
    p = torch.arange(positions, dtype=torch.float64)[:, None]
    i = torch.arange(d // 2, dtype=torch.float64)[None, :]
    angle = p * torch.pow(torch.tensor(float(base), dtype=torch.float64), -2.0 * i / d)
    return torch.cos(angle).float().to(dtype), torch.sin(angle).float().to(dtype)


def split_heads(x, H):
    """[B,T,D] -> [B,T,H,d] -> [B,H,T,d]: feature j goes to head j // d, coordinate j % d."""
    B, T, D = x.shape
    return x.view(B, T, H, D // H).transpose(1, 2)


def merge_heads(x):
    """[B,H,T,d] -> [B,T,H,d] -> [B,T,D], the inverse of split_heads."""
    B, H, T, d = x.shape
    return x.transpose(1, 2).reshape(B, T, H * d)


def apply_rope(x, cos, sin):
    """x [B,H,T,d], cos/sin [T,d/2]: each pair (x[2i], x[2i+1]) turned by its angle."""
    even, odd = x[..., 0::2], x[..., 1::2]                          # [B,H,T,d/2]
    turned_even = even * cos - odd * sin
    turned_odd = even * sin + odd * cos
    return torch.stack((turned_even, turned_odd), dim=-1).flatten(-2)


class Gpt:
    """docs/model.md's forward over a dict of named parameters (any float dtype).
    With `caches` (one dict per layer) keys and values of earlier positions are kept
    after RoPE, and `start` is the absolute position of ids[:, 0]."""

    def __init__(self, m, params):
        self.m, self.params = m, params
        dtype = params["tok_emb.weight"].dtype
        self.d = m["n_embd"] // m["n_head"]
        self.rope_cos = self.rope_sin = None
        if m["position"] == "rope":
            self.rope_cos, self.rope_sin = rope_table(m["block_size"], self.d, m["rope_base"], dtype)

    def rope_rows(self, start, T):
        if self.rope_cos.shape[0] < start + T:  # a sliding KV cache goes past block_size
            self.rope_cos, self.rope_sin = rope_table(2 * (start + T), self.d, self.m["rope_base"],
                                                      self.rope_cos.dtype)
        return self.rope_cos[start:start + T], self.rope_sin[start:start + T]

    def forward(self, ids, training=False, caches=None, start=0, weights=None, ablate=None):
        """ids [B,T] (int64) -> logits [B,T,V]. With a list `weights`, each layer's
        projected_weights [B,H,T,S] is appended to it; with ablate = (layer, head), that
        head's output (its slice of w @ v) is zeroed before the out projection."""
        m, P = self.m, self.params
        B, T = ids.shape
        H, D, eps, drop = m["n_head"], m["n_embd"], float(m["norm_eps"]), float(m["dropout"])
        x = F.embedding(ids, P["tok_emb.weight"])                       # [B,T,D]
        if m["position"] == "learned":
            if start + T > m["block_size"]:
                raise UsageError(f"{start + T} positions exceed block_size {m['block_size']}")
            x = x + P["pos_emb.weight"][start:start + T]
        else:
            cos, sin = self.rope_rows(start, T)
        for i in range(m["n_layer"]):
            b = f"blocks.{i}."
            h = F.layer_norm(x, (D,), P[b + "ln1.weight"], P[b + "ln1.bias"], eps)  # biased var, eps inside
            q = split_heads(F.linear(h, P[b + "attn.q_proj.weight"]), H)  # [B,H,T,d]
            k = split_heads(F.linear(h, P[b + "attn.k_proj.weight"]), H)
            v = split_heads(F.linear(h, P[b + "attn.v_proj.weight"]), H)
            if m["position"] == "rope":
                q, k = apply_rope(q, cos, sin), apply_rope(k, cos, sin)
            if caches is not None:
                cache = caches[i]
                if "k" in cache:
                    k, v = torch.cat((cache["k"], k), dim=2), torch.cat((cache["v"], v), dim=2)
                cache["k"], cache["v"] = k, v
            S = k.shape[2]                                              # keys: cached + new
            s = (q @ k.transpose(-2, -1)) / math.sqrt(self.d)           # [B,H,T,S]
            future = torch.ones(T, S, dtype=torch.bool, device=s.device).triu(S - T + 1)
            s = s.masked_fill(future, float("-inf"))                    # key after query
            w = torch.softmax(s, dim=-1)                                # projected_weights
            if weights is not None:
                weights.append(w)
            w = F.dropout(w, drop, training)
            o = w @ v                                                   # [B,H,T,d]
            if ablate is not None and ablate[0] == i:
                o = o.clone()
                o[:, ablate[1]] = 0.0
            attn = F.linear(merge_heads(o), P[b + "attn.out_proj.weight"])  # [B,T,D]
            x = x + F.dropout(attn, drop, training)
            h = F.layer_norm(x, (D,), P[b + "ln2.weight"], P[b + "ln2.bias"], eps)
            hidden = F.gelu(F.linear(h, P[b + "mlp.fc.weight"], P[b + "mlp.fc.bias"]))  # erf GELU
            x = x + F.dropout(F.linear(hidden, P[b + "mlp.proj.weight"], P[b + "mlp.proj.bias"]), drop, training)
        x = F.layer_norm(x, (D,), P["ln_f.weight"], P["ln_f.bias"], eps)
        return F.linear(x, P["head.weight"])                            # [B,T,V]

    def loss(self, ids, targets, training=False):
        """Mean cross-entropy over the B*T predictions."""
        logits = self.forward(ids, training)
        return F.cross_entropy(logits.reshape(-1, logits.shape[-1]), targets.reshape(-1))


# ----------------------------------------------------------------------------- training

def learning_rate(step, t):
    """src/optim/adamw.cpp's schedule: linear warm-up from lr/(warmup+1) to lr, then cosine
    from lr to min_lr at max_steps; `step` counts the updates already made."""
    lr, min_lr, warmup, max_steps = t["lr"], t["min_lr"], t["warmup_steps"], t["max_steps"]
    if step < warmup:
        return lr * (step + 1) / (warmup + 1)
    if step >= max_steps:
        return min_lr
    progress = (step - warmup) / max(1, max_steps - warmup)
    return min_lr + 0.5 * (1.0 + math.cos(math.pi * progress)) * (lr - min_lr)


def clip_gradients(params, max_norm):
    """src/optim/adamw.cpp's global-norm clipping: the L2 norm over every gradient; when it
    exceeds max_norm (> 0) every gradient is scaled by max_norm / (norm + 1e-6).
    Returns the norm before clipping."""
    grads = [p.grad for p in params if p.grad is not None]
    norm = math.sqrt(sum(float((g.double() ** 2).sum()) for g in grads))
    if max_norm > 0 and norm > max_norm:
        for g in grads:
            g.mul_(max_norm / (norm + 1e-6))
    return norm


def make_optimizer(params, t):
    """AdamW (torch's, which src/optim/adamw.h follows) with decoupled weight decay on the
    2-D weights only (embeddings, projections, head), none on biases and LayerNorms."""
    decay = [p for p in params.values() if p.dim() == 2]
    no_decay = [p for p in params.values() if p.dim() != 2]
    groups = [{"params": decay, "weight_decay": t["weight_decay"]}, {"params": no_decay, "weight_decay": 0.0}]
    return torch.optim.AdamW(groups, lr=t["lr"], betas=(t["beta1"], t["beta2"]), eps=t["eps"])


def train_step(model, optimizer, step, t, ids, targets, training=True):
    """One step as src/train/train.cpp takes it: loss, backward, clip, AdamW at this step's
    rate. Returns (loss, lr, grad norm)."""
    lr = learning_rate(step, t)
    for group in optimizer.param_groups:
        group["lr"] = lr
    optimizer.zero_grad(set_to_none=True)
    loss = model.loss(ids, targets, training)
    loss.backward()
    norm = clip_gradients(list(model.params.values()), t["grad_clip"])
    optimizer.step()
    return float(loss), lr, norm


def corpus_windows(text, vocab, offsets, T):
    """inputs s[o, o+T), targets s[o+1, o+T+1) for each offset o, as int64 [B,T]."""
    index = {s: i for i, s in enumerate(vocab)}
    ids = torch.tensor([[index[c] for c in text[o:o + T + 1]] for o in offsets], dtype=torch.int64)
    return ids[:, :T].contiguous(), ids[:, 1:].contiguous()


# ----------------------------------------------------------------------------- safetensors

def write_safetensors(path, tensors, metadata, checksum=True):
    """docs/checkpoint.md, "Layout, byte by byte": u64 header length, JSON header padded
    with spaces to a multiple of 8, then each tensor row-major little-endian float32, contiguous in the given order.
    Adds data_sha256 (hex SHA-256 of the data) as mini-gpt's own writer does, unless
    checksum is False (a file without one, as other writers make, must load too)."""
    blobs = [(name, np.ascontiguousarray(array, dtype="<f4")) for name, array in tensors]
    data = b"".join(a.tobytes() for _, a in blobs)
    header = {"__metadata__": dict(metadata, data_sha256=hashlib.sha256(data).hexdigest()) if checksum
              else dict(metadata)}
    offset = 0
    for name, a in blobs:
        header[name] = {"dtype": "F32", "shape": list(a.shape), "data_offsets": [offset, offset + a.nbytes]}
        offset += a.nbytes
    text = json.dumps(header, ensure_ascii=False, separators=(",", ":")).encode("utf-8")
    text += b" " * (-len(text) % 8)
    script_io.write_atomically(path, struct.pack("<Q", len(text)) + text + data, "--out")


def read_safetensors(path):
    """-> (metadata, {name: float32 array}); refuses gaps, overlaps, trailing bytes and
    anything but F32."""
    raw = script_io.read_bytes(path, "checkpoint", MAX_CHECKPOINT_BYTES)
    if len(raw) < 8:
        raise UsageError(f"{path}: {len(raw)} bytes, shorter than the 8-byte header length")
    (n,) = struct.unpack("<Q", raw[:8])
    if n > len(raw) - 8:
        raise UsageError(f"{path}: header length {n} runs past the end of the file")
    try:
        header = json.loads(raw[8:8 + n].decode("utf-8"))
    except (UnicodeDecodeError, json.JSONDecodeError):
        raise UsageError(f"{path}: the header is not UTF-8 JSON")
    if not isinstance(header, dict):
        raise UsageError(f"{path}: the header is not a JSON object")
    metadata = header.pop("__metadata__", {})
    data = memoryview(raw)[8 + n:]
    tensors, covered = {}, []
    for name, entry in header.items():
        if entry.get("dtype") != "F32":
            raise UsageError(f"{path}: tensor {name}: dtype {entry.get('dtype')!r}, expected F32")
        begin, end = entry["data_offsets"]
        count = math.prod(entry["shape"])
        if end - begin != 4 * count or not 0 <= begin <= end <= len(data):
            raise UsageError(f"{path}: tensor {name}: offsets [{begin}, {end}] do not hold shape {entry['shape']}")
        tensors[name] = np.frombuffer(data[begin:end], dtype="<f4").reshape(entry["shape"])
        covered.append((begin, end, name))
    position = 0
    for begin, end, name in sorted(covered):
        if begin != position:
            raise UsageError(f"{path}: tensor {name} starts at {begin}, expected {position} (gap or overlap)")
        position = end
    if position != len(data):
        raise UsageError(f"{path}: tensors cover {position} of the {len(data)} data bytes")
    return metadata, tensors


# ----------------------------------------------------------------------------- fixtures

# The golden model: smaller than the default so each file stays under ~1.5 MB, with a
# warm-up shorter than the steps so both phases of the schedule run, and a clip limit
# that some steps' gradient norms exceed and others do not (both paths of the clipping).
FIXTURE_MODEL = {"n_layer": 2, "n_embd": 64, "n_head": 2, "block_size": 32, "rope_base": 10000.0,
                 "mlp_ratio": 4, "dropout": 0.0, "norm_eps": 1e-5}
FIXTURE_TRAIN = {"batch_size": 4, "max_steps": 10, "lr": 1e-2, "min_lr": 1e-3, "warmup_steps": 3,
                 "weight_decay": 0.1, "beta1": 0.9, "beta2": 0.99, "eps": 1e-8, "grad_clip": 3.5, "seed": 20240613}
FIXTURE_OFFSETS = [0, 123457, 234571, 345679]  # symbol offsets of the 4 windows in data/corpus.txt

PRECISION_NOTE = {
    "float64": "computed in float64 from the float32 initial parameters (exact in float64), with the RoPE "
               "cos/sin rounded to float32 as docs/model.md says; each stored value is rounded once to "
               "float32 at the end. Why: the reference's own rounding (~1e-16 per op) is then far below "
               "float32's (~6e-8), so a difference the test sees is mini-gpt's float32 rounding alone, and "
               "the file's bytes do not depend on torch's thread count or summation order.",
    "float32": "computed in float32, as mini-gpt computes: differences are the two programs' float32 roundings "
               "combined (use float64 fixtures to see mini-gpt's alone).",
}


def fixture_tensors(position, text, vocab, dtype, generator):
    """Everything one golden file holds, as (name, array) in file order, and a summary."""
    m = dict(FIXTURE_MODEL, position=position, vocab_size=len(vocab))
    t = FIXTURE_TRAIN
    T = m["block_size"]
    ids, targets = corpus_windows(text, vocab, FIXTURE_OFFSETS, T)
    initial = init_parameters(m, generator)  # float32

    def fresh_params():
        return {n: p.to(dtype).clone().requires_grad_(True) for n, p in initial.items()}

    # Step 0: logits, loss and every gradient.
    model = Gpt(m, fresh_params())
    logits = model.forward(ids)
    loss = F.cross_entropy(logits.reshape(-1, logits.shape[-1]), targets.reshape(-1))
    loss.backward()
    # The first optimizer steps, from the same initial parameters.
    model_steps = Gpt(m, fresh_params())
    optimizer = make_optimizer(model_steps.params, t)
    runs = [train_step(model_steps, optimizer, step, t, ids, targets) for step in range(t["max_steps"])]

    out = [(n, p.numpy()) for n, p in initial.items()]
    out += [("input_ids", ids.numpy()), ("targets", targets.numpy()),
            ("logits", logits.detach().numpy()), ("loss", np.array([float(loss)]))]
    out += [("grad." + n, p.grad.numpy()) for n, p in model.params.items()]
    out += [("steps.loss", np.array([r[0] for r in runs])), ("steps.lr", np.array([r[1] for r in runs])),
            ("steps.grad_norm", np.array([r[2] for r in runs]))]
    return m, out, runs


def cmd_fixtures(args):
    dtype = {"float64": torch.float64, "float32": torch.float32}[args.dtype]
    corpus = os.path.join(ROOT, "data", "corpus.txt")
    text = read_text(corpus)
    vocab = corpus_vocab(text)
    if max(FIXTURE_OFFSETS) + FIXTURE_MODEL["block_size"] + 1 > len(text):
        raise UsageError(f"{corpus}: {len(text)} symbols, too short for the fixture windows")
    os.makedirs(args.out, exist_ok=True)
    for position in ("rope", "learned"):
        generator = torch.Generator().manual_seed(FIXTURE_TRAIN["seed"])
        m, tensors, runs = fixture_tensors(position, text, vocab, dtype, generator)
        metadata = {
            "format": "mini-gpt", "format_version": "1", "step": "0",
            "config": json.dumps({"model": m, "train": FIXTURE_TRAIN}),
            "vocab": json.dumps(vocab, ensure_ascii=False),
            "golden_precision": args.dtype,
            "golden_precision_why": PRECISION_NOTE[args.dtype],
            "golden_batch": f"inputs s[o, o+T) and targets s[o+1, o+T+1) of data/corpus.txt (symbols) at offsets "
                            f"{FIXTURE_OFFSETS}, T = {m['block_size']}; ids and targets stored as float32 (exact)",
            "golden_tensors": "the checkpoint's parameter names (docs/checkpoint.md) hold the initial "
                              f"parameters (torch.Generator seed {FIXTURE_TRAIN['seed']}, docs/model.md init); "
                              "input_ids, targets [B,T]; logits [B,T,V]; loss [1]; grad.NAME: d loss / d NAME "
                              "at the initial parameters; steps.loss, steps.lr, steps.grad_norm [max_steps]: each "
                              "AdamW step's loss (before its update), "
                              "learning rate and gradient norm before clipping, all on the same batch",
            "golden_generator": f"/usr/bin/python3 scripts/torch_reference.py fixtures --out tests/fixtures "
                                f"--dtype {args.dtype}",
            "golden_torch": torch.__version__,
        }
        path = os.path.join(args.out, f"golden_{position}.safetensors")
        write_safetensors(path, tensors, metadata)
        read_safetensors(path)  # the file reads back
        print(json.dumps({"fixture": path, "bytes": os.path.getsize(path), "position": position,
                          "precision": args.dtype, "losses": [round(r[0], 6) for r in runs],
                          "lrs": [round(r[1], 6) for r in runs], "grad_norms": [round(r[2], 4) for r in runs]}))


# ----------------------------------------------------------------------------- checkpoints

def load_checkpoint(path):
    """A mini-gpt checkpoint (docs/checkpoint.md) -> {"model", "vocab", "params" (float32
    torch tensors by checkpoint name), "metadata"}. AdamW moments (optim.*) are ignored; a
    data_sha256, when present, is checked."""
    metadata, tensors = read_safetensors(path)
    for key in ("format", "format_version", "config", "vocab"):
        if key not in metadata:
            raise UsageError(f"{path}: __metadata__ has no {key!r}")
    if metadata["format"] != "mini-gpt" or metadata["format_version"] != "1":
        raise UsageError(f"{path}: format {metadata['format']!r} version {metadata['format_version']!r}, "
                         "expected \"mini-gpt\" version \"1\"")
    if "data_sha256" in metadata:
        h = hashlib.sha256()
        for name in sorted(tensors, key=lambda n: tensors[n].ctypes.data):
            h.update(tensors[name].tobytes())
        if h.hexdigest() != metadata["data_sha256"]:
            raise UsageError(f"{path}: the data's SHA-256 is not the data_sha256 of its metadata")
    try:
        config, vocab = json.loads(metadata["config"]), json.loads(metadata["vocab"])
    except json.JSONDecodeError as e:
        raise UsageError(f"{path}: __metadata__ config or vocab is not JSON: {e.msg}")
    model = dict(MODEL_DEFAULTS)
    for key, value in config.get("model", {}).items():
        if key not in MODEL_DEFAULTS:
            raise UsageError(f"{path}: unknown key model.{key} in the checkpoint's config")
        model[key] = value
    check_model(model)
    if not isinstance(vocab, list) or len(vocab) != model["vocab_size"] or len(set(vocab)) != len(vocab):
        raise UsageError(f"{path}: the vocab is not {model['vocab_size']} distinct symbols")
    params = {}
    for name, shape in parameter_shapes(model):
        if name not in tensors:
            raise UsageError(f"{path}: tensor {name} is missing")
        if tuple(tensors[name].shape) != shape:
            raise UsageError(f"{path}: tensor {name} has shape {list(tensors[name].shape)}, expected {list(shape)}")
        params[name] = torch.from_numpy(tensors[name].astype(np.float32))  # a copy: the file's buffer is read-only
    for name in tensors:
        if name not in params and not name.startswith("optim."):
            raise UsageError(f"{path}: unknown tensor {name}")
    return {"model": model, "vocab": vocab, "params": params, "metadata": metadata}


def encode(text, vocab, what):
    """Symbols -> ids; a symbol outside the vocabulary is an error naming it and its position."""
    index = {s: i for i, s in enumerate(vocab)}
    ids = []
    for position, symbol in enumerate(text):
        if symbol not in index:
            raise UsageError(f"{what}: \"{symbol}\" (U+{ord(symbol):04X}) at position {position} is not in the "
                             "checkpoint's vocabulary")
        ids.append(index[symbol])
    return ids


def print_utf8(text):
    sys.stdout.buffer.write((text + "\n").encode("utf-8"))
    sys.stdout.flush()


def cross_entropy_sum(logits, targets):
    """Summed next-symbol cross-entropy, in float64 from the logits as they are: per row
    log-sum-exp minus the target's logit (model.md section 2.8's formula)."""
    logp = torch.log_softmax(logits.reshape(-1, logits.shape[-1]).double(), dim=-1)
    return float(-logp.gather(1, targets.reshape(-1, 1)).sum())


def mean_cross_entropy(logits, targets):
    return cross_entropy_sum(logits, targets) / targets.numel()


def cmd_write_checkpoint(args):
    cfg = load_config(args.config)
    if args.vocab_file is not None:
        vocab = corpus_vocab(read_text(args.vocab_file))
    elif args.vocab_text is not None:
        vocab = corpus_vocab(args.vocab_text)
    elif cfg["text"] is not None:
        vocab = corpus_vocab(cfg["text"])
    else:
        raise UsageError("no vocabulary: give --vocab-file or --vocab-text, or a config whose data.path can be read")
    if not vocab:
        raise UsageError("the vocabulary is empty")
    m = dict(cfg["model"], vocab_size=len(vocab))
    check_model(m)
    seed = cfg["train"]["seed"] if args.seed is None else args.seed
    params = init_parameters(m, torch.Generator().manual_seed(seed), args.init)
    if args.qk_scale != 1.0:
        for name in params:
            if name.endswith(("attn.q_proj.weight", "attn.k_proj.weight")):
                params[name] = params[name] * args.qk_scale  # float32, rounded once
    metadata = {"format": "mini-gpt", "format_version": "1",
                "config": json.dumps({"model": m, "train": cfg["train_given"]}, ensure_ascii=False),
                "vocab": json.dumps(vocab, ensure_ascii=False), "step": "0"}
    write_safetensors(args.out, [(n, p.numpy()) for n, p in params.items()], metadata,
                      checksum=not args.no_data_sha256)
    load_checkpoint(args.out)  # the file reads back
    with open(args.out, "rb") as f:
        digest = hashlib.sha256(f.read()).hexdigest()
    tok_emb = params["tok_emb.weight"].numpy().reshape(-1)
    print_utf8(json.dumps({"out": args.out, "bytes": os.path.getsize(args.out), "sha256": digest,
                           "tensors": len(params), "params": parameter_counts(params)[0], "vocab_size": len(vocab),
                           "seed": seed, "init": args.init, "qk_scale": args.qk_scale,
                           # What a reader can check the file by: tok_emb's first bit patterns, its
                           # sum and the sum of |x| over every tensor, both in float64.
                           "tok_emb_first_bits": [int(b) for b in tok_emb[:3].view(np.uint32)],
                           "tok_emb_sum": float(tok_emb.astype(np.float64).sum()),
                           "abs_sum": float(sum(np.abs(p.numpy().astype(np.float64)).sum() for p in params.values()))},
                          ensure_ascii=False))


def head_summary(w, T):
    """src/interp/patterns.cpp's summary of one head's [T,T] weights (docs/cli.md), in double."""
    w = np.asarray(w, dtype=np.float64)
    entropy, by_offset = 0.0, [0.0] * T  # by_offset[b]: weight on offset -b
    for t in range(T):
        for k in range(t + 1):
            p = w[t, k]
            if p > 0.0:
                entropy -= p * math.log(p)
            by_offset[t - k] += p
    best = 0
    for back in range(1, T):  # from offset 0 backwards: a tie keeps the offset nearest 0
        if by_offset[back] > by_offset[best]:
            best = back
    first = sum(w[t, 0] for t in range(1, T)) / (T - 1) if T > 1 else None
    return {"mean_entropy": entropy / T, "top_offset": -best, "top_offset_share": by_offset[best] / T,
            "first_share": first}


def cmd_heads(args):
    ck = load_checkpoint(args.checkpoint)
    m, vocab = ck["model"], ck["vocab"]
    if not args.text:
        raise UsageError("--text is empty: give at least one symbol")
    if len(args.text) > m["block_size"]:
        raise UsageError(f"--text has {len(args.text)} symbols, more than the model's block_size of {m['block_size']}")
    for flag, value, bound in (("--layer", args.layer, m["n_layer"]), ("--head", args.head, m["n_head"])):
        if value is not None and not 0 <= value < bound:
            raise UsageError(f"{flag} {value} is out of range: valid 0..{bound - 1}")
    ids = torch.tensor([encode(args.text, vocab, "--text")], dtype=torch.int64)  # [1,T]
    T = ids.shape[1]
    model = Gpt(m, ck["params"])

    def text_loss(ablate=None):  # inputs ids[0..T-2], targets ids[1..T-1], as inspect-heads scores
        return mean_cross_entropy(model.forward(ids[:, :-1], ablate=ablate), ids[:, 1:])

    with torch.no_grad():
        weights = []
        model.forward(ids, weights=weights)
        loss = text_loss() if T > 1 else None
        layers = []
        for layer in range(m["n_layer"]):
            if args.layer is not None and layer != args.layer:
                continue
            heads = []
            for head in range(m["n_head"]):
                if args.head is not None and head != args.head:
                    continue
                w = weights[layer][0, head]  # [T,T] float32
                summary = head_summary(w.numpy(), T)
                ablated = text_loss((layer, head)) if T > 1 else None
                summary["importance"] = None if ablated is None else ablated - loss
                summary["ablated_loss"] = ablated
                heads.append({"head": head, "projected_weights": w.tolist(), "summary": summary})
            layers.append({"layer": layer, "heads": heads})
    print_utf8(json.dumps({"text": args.text, "tokens": [vocab[i] for i in ids[0].tolist()], "layers": layers},
                          ensure_ascii=False))


def cmd_loss(args):
    ck = load_checkpoint(args.checkpoint)
    m, T = ck["model"], ck["model"]["block_size"]
    ids = encode(read_text(args.text_file), ck["vocab"], args.text_file)
    n = len(ids)
    if n < T + 1:
        raise UsageError(f"{args.text_file}: {n} symbols, fewer than block_size + 1 = {T + 1}")
    windows = (n - 1) // T
    dtype = {"float32": torch.float32, "float64": torch.float64}[args.dtype]
    model = Gpt(m, {name: p.to(dtype) for name, p in ck["params"].items()})
    ids = torch.tensor(ids, dtype=torch.int64)
    total = 0.0
    with torch.no_grad():
        for first in range(0, windows, args.batch):
            ks = torch.arange(first, min(first + args.batch, windows))
            window = ids[ks[:, None] * T + torch.arange(T + 1)]  # [b, T+1]
            logits = model.forward(window[:, :T])
            total += cross_entropy_sum(logits, window[:, 1:])
    print_utf8(json.dumps({"loss": total / (windows * T), "predictions": windows * T, "windows": windows,
                           "symbols": n, "dtype": args.dtype}))


def cmd_greedy(args):
    ck = load_checkpoint(args.checkpoint)
    m, vocab, T = ck["model"], ck["vocab"], ck["model"]["block_size"]
    if args.prompt_file is not None:
        prompt = read_text(args.prompt_file)
        ids = encode(prompt, vocab, args.prompt_file)
    else:
        prompt = args.prompt
        ids = encode(prompt, vocab, "--prompt")
    if not ids:  # an empty prompt starts from "\n" when the vocabulary has it, else id 0, unprinted
        ids = [vocab.index("\n") if "\n" in vocab else 0]
    model = Gpt(m, ck["params"])
    out = []
    with torch.no_grad():
        for _ in range(args.max_new_tokens):
            # The last block_size symbols at positions 0 .. block_size-1: a fresh forward.
            logits = model.forward(torch.tensor([ids[-T:]], dtype=torch.int64))[0, -1]
            best = int(torch.nonzero(logits == logits.max())[0, 0])  # a tie goes to the lowest id
            ids.append(best)
            out.append(vocab[best])
    print_utf8(prompt + "".join(out))


# ----------------------------------------------------------------------------- benchmarks

def flops_per_token(m, T=None):
    """Matmul FLOPs per token (a multiply-add is 2), the full T x T attention counted:
    forward = L * (2 * (4 D^2 + 2 r D^2) + 4 T D) + 2 D V; training = 3 x forward."""
    L, D, V, r = m["n_layer"], m["n_embd"], m["vocab_size"], m["mlp_ratio"]
    T = m["block_size"] if T is None else T
    forward = L * (2 * (4 * D * D + 2 * r * D * D) + 4 * T * D) + 2 * D * V
    return {"forward": forward, "train": 3 * forward}


def parameter_counts(params):
    total = sum(p.numel() for p in params.values())
    embeddings = sum(params[n].numel() for n in ("tok_emb.weight", "pos_emb.weight") if n in params)
    return total, total - embeddings


def openblas_cores():
    """openblas_get_corename() of each OpenBLAS this process has mapped (ctypes on the loaded
    library itself): the kernel set OpenBLAS chose, which OPENBLAS_CORETYPE can force."""
    import ctypes
    cores = {}
    for path in blas_in_use():
        try:
            corename = ctypes.CDLL(path).openblas_get_corename
        except (OSError, AttributeError):  # netlib's libblas has no such function
            continue
        corename.restype = ctypes.c_char_p
        cores[path] = corename().decode("ascii", "replace")
    return cores


def bench_fields():
    return {"threads": torch.get_num_threads(), "blas": blas_in_use(), "openblas_core": openblas_cores(),
            "openblas_env": {k: os.environ[k] for k in ("OPENBLAS_CORETYPE", "OPENBLAS_L2_SIZE") if k in os.environ},
            "openblas_threads": os.environ.get("OPENBLAS_NUM_THREADS"), "torch": torch.__version__}


def cmd_train_bench(args):
    cfg = load_config(args.config)
    m, t = cfg["model"], dict(cfg["train"])
    B, T = args.batch or t["batch_size"], m["block_size"]
    total_steps = args.warmup + args.steps
    generator = torch.Generator().manual_seed(args.seed)
    model = Gpt(m, {n: p.requires_grad_(True) for n, p in init_parameters(m, generator).items()})
    optimizer = make_optimizer(model.params, t)
    if cfg["text"] is not None and len(cfg["text"]) > T + 1:  # random windows of the corpus, as mini-gpt trains
        text, vocab = cfg["text"], corpus_vocab(cfg["text"])
        index = {s: i for i, s in enumerate(vocab)}
        corpus = torch.tensor([index[c] for c in text], dtype=torch.int64)
        starts = torch.randint(0, len(text) - T - 1, (total_steps, B), generator=generator)
        batches = [corpus[s[:, None] + torch.arange(T + 1)] for s in starts]  # [B,T+1] each
    else:
        batches = list(torch.randint(0, m["vocab_size"], (total_steps, B, T + 1), generator=generator))
    losses, started = [], None
    for step in range(total_steps):
        if step == args.warmup:
            started = time.perf_counter()
        batch = batches[step]
        losses.append(train_step(model, optimizer, step, t, batch[:, :T], batch[:, 1:])[0])
    elapsed = time.perf_counter() - started
    tokens_per_s = B * T * args.steps / elapsed
    total, non_embedding = parameter_counts(model.params)
    flops = flops_per_token(m)["train"]
    print(json.dumps(dict({
        "bench": "train", "tokens_per_s": round(tokens_per_s, 1), "ms_per_step": round(1e3 * elapsed / args.steps, 3),
        "params": total, "params_non_embedding": non_embedding, "batch": B, "block_size": T,
        "steps": args.steps, "warmup": args.warmup, "train_flops_per_token": flops,
        "achieved_gflops": round(tokens_per_s * flops / 1e9, 3),
        "first_loss": round(losses[0], 4), "last_loss": round(losses[-1], 4)}, **bench_fields())))


def cmd_sample_bench(args):
    cfg = load_config(args.config)
    m = cfg["model"]
    T = m["block_size"]
    generator = torch.Generator().manual_seed(args.seed)
    model = Gpt(m, init_parameters(m, generator))

    def next_symbol(logits):
        return torch.multinomial(torch.softmax(logits[:, -1, :], dim=-1), 1, generator=generator)  # [1,1]

    def without_cache(n):
        ids = torch.zeros((1, 1), dtype=torch.int64)  # a one-symbol prompt, id 0
        for _ in range(n):
            ids = torch.cat((ids, next_symbol(model.forward(ids[:, -T:]))), dim=1)
        return ids

    def with_cache(n):
        ids = torch.zeros((1, 1), dtype=torch.int64)
        caches = [{} for _ in range(m["n_layer"])]
        logits, position = model.forward(ids, caches=caches), 1
        for _ in range(n):
            new = next_symbol(logits)
            ids = torch.cat((ids, new), dim=1)
            if caches[0]["k"].shape[2] >= T:
                if m["position"] == "rope":
                    # Keep the newest T-1 keys: RoPE scores depend only on the query-key
                    # distance, so positions may keep counting past block_size.
                    for c in caches:
                        c["k"], c["v"] = c["k"][:, :, 1 - T:], c["v"][:, :, 1 - T:]
                else:  # learned positions stop at block_size: refill the cache from the last T-1 ids
                    caches = [{} for _ in range(m["n_layer"])]
                    model.forward(ids[:, -T:-1], caches=caches)
                    position = T - 1
            logits = model.forward(new, caches=caches, start=position)
            position += 1
        return ids

    run = with_cache if args.kv_cache else without_cache
    with torch.no_grad():
        run(args.warmup)
        started = time.perf_counter()
        ids = run(args.new_tokens)
        elapsed = time.perf_counter() - started
    assert ids.shape[1] == 1 + args.new_tokens
    print(json.dumps(dict({
        "bench": "sample", "kv_cache": bool(args.kv_cache), "tokens_per_s": round(args.new_tokens / elapsed, 1),
        "ms_per_token": round(1e3 * elapsed / args.new_tokens, 3), "new_tokens": args.new_tokens, "block_size": T,
        "params": parameter_counts(model.params)[0],
        "forward_flops_per_full_window": flops_per_token(m)["forward"] * T}, **bench_fields())))


# ----------------------------------------------------------------------------- command line

def build_parser():
    parser = script_io.ArgumentParser(prog=PROG, description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    commands = parser.add_subparsers(dest="command", required=True)

    def command(name, run, help_text):
        p = commands.add_parser(name, help=help_text)
        p.set_defaults(run=run)
        p.add_argument("--threads", type=int, default=None, help="torch, OpenMP and OpenBLAS threads")
        p.add_argument("--blas-threads", type=int, default=None, help="OpenBLAS threads alone (default: --threads)")
        p.add_argument("--blas", choices=["system"] + sorted(BLAS_PATHS), default="system",
                       help="which libblas.so.3 torch loads (default: the system's alternative)")
        return p

    p = command("fixtures", cmd_fixtures, "write tests/fixtures/golden_{rope,learned}.safetensors")
    p.add_argument("--out", default=os.path.join(ROOT, "tests", "fixtures"))
    p.add_argument("--dtype", choices=["float64", "float32"], default="float64",
                   help="precision of the reference's arithmetic (the files are float32 either way)")
    p = command("write-checkpoint", cmd_write_checkpoint, "a freshly initialised model as a mini-gpt checkpoint")
    p.add_argument("--config", default=None, help="a mini-gpt config (default: docs/config.md's defaults)")
    p.add_argument("--out", required=True, help="the .safetensors file to write")
    p.add_argument("--seed", type=int, default=None, help="default: the config's train.seed")
    vocab = p.add_mutually_exclusive_group()
    vocab.add_argument("--vocab-file", help="the vocabulary: this UTF-8 file's distinct symbols, sorted")
    vocab.add_argument("--vocab-text", help="the vocabulary: this text's distinct symbols, sorted")
    p.add_argument("--init", choices=["spec", "torch-nn"], default="spec",
                   help="spec: docs/model.md's draws alone from torch.Generator(seed); torch-nn: first the "
                        "draws torch.nn's Embedding and Linear constructors make (a model built from torch.nn modules)")
    p.add_argument("--qk-scale", type=float, default=1.0,
                   help="multiply every q_proj and k_proj weight by this (float32) after initialisation")
    p.add_argument("--no-data-sha256", action="store_true", help="leave data_sha256 out of the metadata")
    p = command("heads", cmd_heads, "inspect-heads' JSON (docs/cli.md) for a checkpoint and a text")
    p.add_argument("--checkpoint", required=True)
    p.add_argument("--text", required=True)
    p.add_argument("--layer", type=int, default=None)
    p.add_argument("--head", type=int, default=None)
    p = command("loss", cmd_loss, "eval's deterministic loss (docs/cli.md) of a text file; one JSON line")
    p.add_argument("--checkpoint", required=True)
    p.add_argument("--text-file", required=True)
    p.add_argument("--batch", type=int, default=64, help="windows per forward")
    p.add_argument("--dtype", choices=["float32", "float64"], default="float32",
                   help="the forward's precision (the cross-entropy is float64 either way)")
    p = command("greedy", cmd_greedy, "greedy generation, as sample --temperature 0 prints it")
    p.add_argument("--checkpoint", required=True)
    prompt = p.add_mutually_exclusive_group()
    prompt.add_argument("--prompt", default="")
    prompt.add_argument("--prompt-file", default=None)
    p.add_argument("--max-new-tokens", type=int, default=200)
    p = command("train-bench", cmd_train_bench, "time training steps; one JSON line")
    p.add_argument("--config", default=os.path.join(ROOT, "configs", "default.json"))
    p.add_argument("--steps", type=int, default=100, help="timed steps")
    p.add_argument("--warmup", type=int, default=30, help="untimed steps before them")
    p.add_argument("--batch", type=int, default=None, help="default: the config's train.batch_size")
    p.add_argument("--seed", type=int, default=1337)
    p = command("sample-bench", cmd_sample_bench, "time sampling; one JSON line")
    p.add_argument("--config", default=os.path.join(ROOT, "configs", "default.json"))
    p.add_argument("--new-tokens", type=int, default=500)
    p.add_argument("--warmup", type=int, default=20, help="symbols drawn (untimed) before timing")
    p.add_argument("--kv-cache", action="store_true")
    p.add_argument("--seed", type=int, default=1337)
    p = command("circuits", run_circuits, "inspect-heads' attribution, patching and composition (float64); JSON")
    p.add_argument("--cases", required=True,
                   help='JSON list of {"checkpoint", "text", "answer", "against", "corrupt"}')
    p = command("edge-circuits", run_edge_circuits,
                "inspect-heads --circuit's edges, proof and EAP, and --score-split (float64); JSON")
    p.add_argument("--cases", required=True,
                   help='JSON list of {"checkpoint", "threshold", "pairs": [{"clean", "corrupt", "answer", "against"}], '
                        '"split": {"text", "layer", "head", "position"}}')
    return parser


def run_edge_circuits(args):
    import torch_circuits
    torch_circuits.cmd_edge_circuits(args, sys.modules[__name__])


def run_circuits(args):
    import torch_circuits  # the circuit modes live beside this file, in their own
    torch_circuits.cmd_circuits(args, sys.modules[__name__])


def main(argv=None):
    args = build_parser().parse_args(argv)
    choose_blas(args.blas)
    import_torch(args.threads, args.blas_threads)
    args.run(args)
    return 0


if __name__ == "__main__":
    script_io.run_main(PROG, main)
