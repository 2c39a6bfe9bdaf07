"""The circuit numbers of inspect-heads (docs/cli.md, "Circuits"), written again in
PyTorch, in float64, from the formulas alone: direct logit attribution with ln_f's scale
frozen, activation patching's restored fraction, and Elhage et al.'s Q-, K- and
V-composition scores with ln1 folded in and the weights centred as TransformerLens's
fold_ln and center_writing_weights leave them. torch_reference.py's `circuits` command
runs it; tests/fixtures/circuits_golden.json is its output on the fixture models, and
tests/circuit_golden_test.cpp holds mini-gpt to it.

Its forward is its own (not torch_reference.Gpt's) because it records the activations
at TransformerLens's points and lets one be replaced, the way mini-gpt's nn/hooks.h does.
"""

import json
import math

# torch_reference itself (its torch, F and helpers), set by cmd_circuits: run as a script,
# it is __main__, whose import_torch has already loaded torch for its own globals.
ref = None


def forward(m, P, ids, patch=None):
    """ids [1,T] -> (logits [1,T,V], acts): acts holds hook_embed, hook_pos_embed,
    blocks.L.hook_resid_pre, blocks.L.attn.hook_z [1,H,T,d], blocks.L.hook_mlp_out and
    ln_final.hook_scale [1,T,1]. `patch` maps a point's name to a function returning the
    value the forward goes on with."""
    torch, F = ref.torch, ref.F
    patch = patch or {}
    acts = {}

    def at(name, value):
        value = patch[name](value) if name in patch else value
        acts[name] = value
        return value

    B, T = ids.shape
    H, D, eps = m["n_head"], m["n_embd"], float(m["norm_eps"])
    d = D // H
    x = at("hook_embed", F.embedding(ids, P["tok_emb.weight"]))
    if m["position"] == "learned":
        x = x + at("hook_pos_embed", P["pos_emb.weight"][:T])
    else:
        cos, sin = ref.rope_table(m["block_size"], d, m["rope_base"], x.dtype)
        cos, sin = cos[:T], sin[:T]
    for i in range(m["n_layer"]):
        b = f"blocks.{i}."
        x = at(b + "hook_resid_pre", x)
        h = F.layer_norm(x, (D,), P[b + "ln1.weight"], P[b + "ln1.bias"], eps)
        q = ref.split_heads(F.linear(h, P[b + "attn.q_proj.weight"]), H)
        k = ref.split_heads(F.linear(h, P[b + "attn.k_proj.weight"]), H)
        v = ref.split_heads(F.linear(h, P[b + "attn.v_proj.weight"]), H)
        if m["position"] == "rope":
            q, k = ref.apply_rope(q, cos, sin), ref.apply_rope(k, cos, sin)
        s = (q @ k.transpose(-2, -1)) / math.sqrt(d)
        s = s.masked_fill(torch.ones(T, T, dtype=torch.bool).triu(1), float("-inf"))
        z = at(b + "attn.hook_z", torch.softmax(s, dim=-1) @ v)        # [1,H,T,d]
        x = x + F.linear(ref.merge_heads(z), P[b + "attn.out_proj.weight"])
        h = F.layer_norm(x, (D,), P[b + "ln2.weight"], P[b + "ln2.bias"], eps)
        hidden = F.gelu(F.linear(h, P[b + "mlp.fc.weight"], P[b + "mlp.fc.bias"]))
        x = x + at(b + "hook_mlp_out", F.linear(hidden, P[b + "mlp.proj.weight"], P[b + "mlp.proj.bias"]))
    acts["ln_final.hook_scale"] = torch.sqrt(x.var(dim=-1, unbiased=False, keepdim=True) + eps)
    x = F.layer_norm(x, (D,), P["ln_f.weight"], P["ln_f.bias"], eps)
    return F.linear(x, P["head.weight"]), acts


def attribution(m, P, ids, answer, against):
    """Each part of the final stream at the last position through the frozen ln_f:
    [(name, to the answer's logit, to the difference)], and the forward's two logits."""
    logits, acts = forward(m, P, ids)
    H, D = m["n_head"], m["n_embd"]
    d = D // H
    W = P["head.weight"]
    sigma = acts["ln_final.hook_scale"][0, -1, 0]
    u = P["ln_f.weight"] * W[answer]
    u_diff = P["ln_f.weight"] * (W[answer] - W[against])

    def part(name, c):
        c = c - c.mean()
        return [name, float(c @ u / sigma), float(c @ u_diff / sigma)]

    parts = [part("embed", acts["hook_embed"][0, -1])]
    if m["position"] == "learned":
        parts.append(part("pos_embed", acts["hook_pos_embed"][-1]))
    for i in range(m["n_layer"]):
        b = f"blocks.{i}."
        Wo = P[b + "attn.out_proj.weight"]
        for h in range(H):
            parts.append(part(f"L{i}.H{h}", Wo[:, h * d:(h + 1) * d] @ acts[b + "attn.hook_z"][0, h, -1]))
        parts.append(part(f"L{i}.mlp", acts[b + "hook_mlp_out"][0, -1]))
    beta = P["ln_f.bias"]
    parts.append(["ln_f.bias", float(beta @ W[answer]), float(beta @ (W[answer] - W[against]))])
    return {"parts": parts, "logit": float(logits[0, -1, answer]), "against_logit": float(logits[0, -1, against])}


def patching(m, P, clean, corrupt, answer, against):
    """The restored fractions of docs/cli.md: per head (hook_z) at every position and at
    each position alone, per layer and position (hook_resid_pre), and per layer the whole
    stream."""
    def difference(logits):
        return float(logits[0, -1, answer] - logits[0, -1, against])

    clean_logits, source = forward(m, P, clean)
    c, x = difference(clean_logits), difference(forward(m, P, corrupt)[0])

    def restored(name, rows):
        def replace(value):
            value = value.clone()
            value[rows] = source[name][rows]
            return value
        return (difference(forward(m, P, corrupt, {name: replace})[0]) - x) / (c - x)

    L, H, T = m["n_layer"], m["n_head"], clean.shape[1]
    heads = [[restored(f"blocks.{i}.attn.hook_z", (0, h)) for h in range(H)] for i in range(L)]
    head_positions = [[[restored(f"blocks.{i}.attn.hook_z", (0, h, t)) for t in range(T)] for h in range(H)]
                      for i in range(L)]
    streams = [[restored(f"blocks.{i}.hook_resid_pre", (0, t)) for t in range(T)] for i in range(L)]
    whole = [restored(f"blocks.{i}.hook_resid_pre", (0,)) for i in range(L)]
    return {"clean": c, "corrupt": x, "heads": heads, "head_positions": head_positions, "streams": streams,
            "whole_streams": whole}


def composition(m, P):
    """[{writer, reader, q, k, v}] for every earlier and later head."""
    torch = ref.torch
    H, D = m["n_head"], m["n_embd"]
    d = D // H

    def reading(name, gamma, h):  # [D,d], gamma folded in, centred over D
        w = P[name][h * d:(h + 1) * d].T * gamma[:, None]
        return w - w.mean(dim=0, keepdim=True)

    heads = {}
    for i in range(m["n_layer"]):
        b = f"blocks.{i}."
        gamma = P[b + "ln1.weight"]
        for h in range(H):
            wq, wk, wv = (reading(b + f"attn.{n}_proj.weight", gamma, h) for n in "qkv")
            wo = P[b + "attn.out_proj.weight"][:, h * d:(h + 1) * d].T     # [d,D]
            wo = wo - wo.mean(dim=1, keepdim=True)
            heads[(i, h)] = (wq @ wk.T, wv @ wo)                        # QK, OV

    def score(a, b):
        return float(torch.linalg.matrix_norm(a @ b) / (torch.linalg.matrix_norm(a) * torch.linalg.matrix_norm(b)))

    pairs = []
    for (l1, h1), (_, ov1) in heads.items():
        for (l2, h2), (qk2, ov2) in heads.items():
            if l1 < l2:
                pairs.append({"writer": [l1, h1], "reader": [l2, h2], "q": score(ov1, qk2), "k": score(ov1, qk2.T),
                              "v": score(ov1, ov2)})
    return pairs


def case(checkpoint, text, answer, against, corrupt):
    """One fixture model's golden numbers: attribution at TEXT's last position, patching
    TEXT against CORRUPT, composition."""
    torch = ref.torch
    ck = ref.load_checkpoint(checkpoint)
    m, vocab = ck["model"], ck["vocab"]
    P = {name: t.double() for name, t in ck["params"].items()}
    ids = torch.tensor([ref.encode(text, vocab, "--text")], dtype=torch.int64)
    bad = torch.tensor([ref.encode(corrupt, vocab, "--corrupt")], dtype=torch.int64)
    a, b = vocab.index(answer), vocab.index(against)
    with torch.no_grad():
        return {"checkpoint": checkpoint, "text": text, "corrupt": corrupt, "answer": answer, "against": against,
                "attribution": attribution(m, P, ids, a, b), "patching": patching(m, P, ids, bad, a, b),
                "composition": composition(m, P)}


def cmd_circuits(args, reference):
    global ref
    ref = reference
    cases = [case(c["checkpoint"], c["text"], c["answer"], c["against"], c["corrupt"]) for c in json.loads(args.cases)]
    ref.print_utf8(json.dumps({"generated_by": "scripts/torch_reference.py circuits (float64)", "cases": cases},
                              ensure_ascii=False, indent=1))
