#!/usr/bin/python3
"""mini-gpt's own PyTorch reference: the model of SPEC.md section 1, the checkpoint of
section 2, and the optimizer and schedule of src/optim/adamw.cpp and src/jobs/train.cpp,
written with nothing but torch, numpy and the standard library.

Run it with Debian's interpreter, /usr/bin/python3 (`bash scripts/setup_reference.sh`
installs python3-torch and python3-numpy). Nothing in the test suite needs it.

    /usr/bin/python3 scripts/torch_reference.py fixtures --out tests/fixtures
    /usr/bin/python3 scripts/torch_reference.py train-bench --config configs/default.json --threads 2
    /usr/bin/python3 scripts/torch_reference.py sample-bench --config configs/default.json --kv-cache

fixtures      writes tests/fixtures/golden_rope.safetensors and golden_learned.safetensors:
              a small model's initial parameters, a batch of corpus windows, the logits,
              the loss, every parameter's gradient, and the first AdamW steps' losses,
              learning rates and gradient norms (tests/golden_test.cpp checks mini-gpt
              against them).
train-bench   times training steps (forward, mean cross-entropy, backward, global-norm
              clipping, AdamW with the warm-up + cosine schedule) on the config's shapes;
              prints one JSON line (tokens_per_s, ms_per_step, params, achieved GFLOP/s, ...).
sample-bench  times sampling from a freshly initialised model, one symbol at a time, with
              or without a KV cache; prints one JSON line (tokens_per_s, ...).

A config is a mini-gpt config file ({"model", "train", "data"}; SPEC defaults fill what
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

PROG = "torch_reference"
ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

# SPEC section 1's model keys and src/io/config.h's training defaults.
MODEL_DEFAULTS = {"vocab_size": 79, "n_layer": 4, "n_embd": 64, "n_head": 2, "block_size": 64, "position": "rope",
                  "rope_base": 10000.0, "mlp_ratio": 4, "dropout": 0.0, "norm_eps": 1e-5}
TRAIN_DEFAULTS = {"batch_size": 32, "max_steps": 5000, "lr": 1e-3, "min_lr": 1e-4, "warmup_steps": 100,
                  "weight_decay": 0.1, "beta1": 0.9, "beta2": 0.99, "eps": 1e-8, "grad_clip": 1.0, "seed": 1337}

LIB = "/usr/lib/x86_64-linux-gnu"
BLAS_PATHS = {"openblas-openmp": [LIB + "/openblas-openmp"], "openblas-pthread": [LIB + "/openblas-pthread"],
              "netlib": [LIB + "/blas", LIB + "/lapack"]}


class UsageError(Exception):
    """A bad config, option or file: exit status 2."""


# ----------------------------------------------------------------------------- config

def read_text(path):
    try:
        with open(path, "rb") as f:
            raw = f.read()
    except OSError as e:
        raise UsageError(f"{path}: cannot read: {e.strerror}")
    try:
        return raw.decode("utf-8")
    except UnicodeDecodeError as e:
        raise UsageError(f"{path}: invalid UTF-8 at byte offset {e.start}")


def corpus_vocab(text):
    """SPEC section 3: the distinct code points, sorted; id = rank."""
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
    """A mini-gpt config file -> {"model", "train", "text" (the corpus, or None)}."""
    if path is None:
        model = dict(MODEL_DEFAULTS)
        check_model(model)
        return {"model": model, "train": dict(TRAIN_DEFAULTS), "text": None}
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
    return {"model": model, "train": train, "text": text}


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
    """The SPEC tensor names and shapes, in the SPEC's order."""
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


def init_parameters(m, generator):
    """SPEC initialisation in float32, drawn in parameter order from `generator`:
    weights normal(0, 0.02); Wo and W2 normal(0, 0.02/sqrt(2 n_layer)); biases 0;
    LayerNorm weight 1."""
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
    float32 as the SPEC says (and only then widened to `dtype`)."""
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
    """The SPEC section 1 forward over a dict of named parameters (any float dtype).
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

    def forward(self, ids, training=False, caches=None, start=0):
        """ids [B,T] (int64) -> logits [B,T,V]."""
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
            w = F.dropout(w, drop, training)
            attn = F.linear(merge_heads(w @ v), P[b + "attn.out_proj.weight"])  # [B,T,D]
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
    """One step as src/jobs/train.cpp takes it: loss, backward, clip, AdamW at this step's
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

def write_safetensors(path, tensors, metadata):
    """SPEC section 2: u64 header length, JSON header padded with spaces to a multiple of 8,
    then each tensor row-major little-endian float32, contiguous in the given order.
    Adds data_sha256 (hex SHA-256 of the data) as mini-gpt's own writer does."""
    blobs = [(name, np.ascontiguousarray(array, dtype="<f4")) for name, array in tensors]
    data = b"".join(a.tobytes() for _, a in blobs)
    header = {"__metadata__": dict(metadata, data_sha256=hashlib.sha256(data).hexdigest())}
    offset = 0
    for name, a in blobs:
        header[name] = {"dtype": "F32", "shape": list(a.shape), "data_offsets": [offset, offset + a.nbytes]}
        offset += a.nbytes
    text = json.dumps(header, ensure_ascii=False, separators=(",", ":")).encode("utf-8")
    text += b" " * (-len(text) % 8)
    temp = path + ".tmp"
    with open(temp, "wb") as f:
        f.write(struct.pack("<Q", len(text)) + text + data)
    os.replace(temp, path)


def read_safetensors(path):
    """-> (metadata, {name: float32 array}); refuses gaps, overlaps, trailing bytes and
    anything but F32."""
    with open(path, "rb") as f:
        raw = f.read()
    if len(raw) < 8:
        raise UsageError(f"{path}: {len(raw)} bytes, shorter than the 8-byte header length")
    (n,) = struct.unpack("<Q", raw[:8])
    if n > len(raw) - 8:
        raise UsageError(f"{path}: header length {n} runs past the end of the file")
    header = json.loads(raw[8:8 + n].decode("utf-8"))
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
                 "weight_decay": 0.1, "beta1": 0.9, "beta2": 0.99, "eps": 1e-8, "grad_clip": 2.5, "seed": 20240613}
FIXTURE_OFFSETS = [0, 123457, 234571, 345679]  # symbol offsets of the 4 windows in data/corpus.txt

PRECISION_NOTE = {
    "float64": "computed in float64 from the float32 initial parameters (exact in float64), with the RoPE "
               "cos/sin rounded to float32 as SPEC section 1 says; each stored value is rounded once to "
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
            "golden_tensors": "the SPEC parameter names hold the initial parameters (torch.Generator seed "
                              f"{FIXTURE_TRAIN['seed']}, SPEC init); input_ids, targets [B,T]; logits [B,T,V]; "
                              "loss [1]; grad.NAME: d loss / d NAME at the initial parameters; steps.loss, "
                              "steps.lr, steps.grad_norm [max_steps]: each AdamW step's loss (before its update), "
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


def bench_fields():
    return {"threads": torch.get_num_threads(), "blas": blas_in_use(),
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
    parser = argparse.ArgumentParser(prog=PROG, description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
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
    return parser


def main(argv=None):
    args = build_parser().parse_args(argv)
    try:
        choose_blas(args.blas)
        import_torch(args.threads, args.blas_threads)
        args.run(args)
    except UsageError as e:
        print(f"{PROG}: error: {e}", file=sys.stderr)
        return 2
    return 0


if __name__ == "__main__":
    sys.exit(main())
