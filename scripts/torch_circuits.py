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


# ---- inspect-heads --circuit and --score-split (issue 58) --------------------------------
# The edge graph, the circuit search, its proof and EAP of interp/circuit_edges.h, and the
# score split of interp/score_split.h, written again from their comments: one item at a
# time (no padded batch), every forward whole (no partial recomputation), EAP's gradient
# from torch's autograd.

def edge_graph(m):
    """(senders, receivers, edges): senders [(name, layer, head)], receivers
    [(name, layer, head, input)], edges [(sender, receiver)] by receiver, then sender."""
    L, H = m["n_layer"], m["n_head"]
    senders = [("embed", -1, -1)]
    for i in range(L):
        senders += [(f"L{i}.H{h}", i, h) for h in range(H)] + [(f"L{i}.mlp", i, -1)]
    receivers, edges = [], []
    for i in range(L):
        first = 1 + i * (H + 1)
        for h in range(H):
            for inp in "qkv":
                edges += [(s, len(receivers)) for s in range(first)]
                receivers.append((f"L{i}.H{h}.{inp}", i, h, inp))
        edges += [(s, len(receivers)) for s in range(first + H)]
        receivers.append((f"L{i}.mlp", i, -1, "mlp"))
    edges += [(s, len(receivers)) for s in range(len(senders))]
    receivers.append(("logits", -1, -1, "logits"))
    return senders, receivers, edges


def assembled(m, P, graph, ids, answer, against, present=None, corrupt=None, probes=None):
    """One item through the graph: (M, the senders' outputs [1,T,D]). An edge absent from
    PRESENT carries CORRUPT's output of its sender; PROBES (one per receiver) are added to
    the receivers' inputs, for their gradients."""
    torch, F = ref.torch, ref.F
    senders, receivers, edges = graph
    H, D, eps = m["n_head"], m["n_embd"], float(m["norm_eps"])
    d = D // H
    T = ids.shape[1]
    outs = [None] * len(senders)
    x = F.embedding(ids, P["tok_emb.weight"])
    if m["position"] == "learned":
        x = x + P["pos_emb.weight"][:T]
    else:
        cos, sin = ref.rope_table(m["block_size"], d, m["rope_base"], x.dtype)
        cos, sin = cos[:T], sin[:T]
    outs[0] = x
    projections = {}
    M = None
    for r, (name, i, h, inp) in enumerate(receivers):
        total = 0
        for e, (s, to) in enumerate(edges):
            if to == r:
                total = total + (outs[s] if present is None or present[e] else corrupt[s])
        if probes is not None:
            total = total + probes[r]
        b = f"blocks.{i}."
        if inp in "qkv":
            z = F.layer_norm(total, (D,), P[b + "ln1.weight"], P[b + "ln1.bias"], eps)
            p = F.linear(z, P[b + f"attn.{inp}_proj.weight"][h * d:(h + 1) * d])[:, None]   # [1,1,T,d]
            if inp != "v" and m["position"] == "rope":
                p = ref.apply_rope(p, cos, sin)
            projections[inp] = p
            if inp == "v":
                q, k, v = projections["q"], projections["k"], projections["v"]
                s_ = (q @ k.transpose(-2, -1)) / math.sqrt(d)
                s_ = s_.masked_fill(torch.ones(T, T, dtype=torch.bool).triu(1), float("-inf"))
                zh = (torch.softmax(s_, dim=-1) @ v)[:, 0]                              # [1,T,d]
                outs[1 + i * (H + 1) + h] = F.linear(zh, P[b + "attn.out_proj.weight"][:, h * d:(h + 1) * d])
        elif inp == "mlp":
            z = F.layer_norm(total, (D,), P[b + "ln2.weight"], P[b + "ln2.bias"], eps)
            hidden = F.gelu(F.linear(z, P[b + "mlp.fc.weight"], P[b + "mlp.fc.bias"]))
            outs[1 + i * (H + 1) + H] = F.linear(hidden, P[b + "mlp.proj.weight"], P[b + "mlp.proj.bias"])
        else:
            z = F.layer_norm(total[0, -1], (D,), P["ln_f.weight"], P["ln_f.bias"], eps)
            logits = F.linear(z, P["head.weight"])
            M = logits[answer] - logits[against]
    return M, outs


def edge_circuit(m, P, pairs, threshold):
    """The circuit of interp/circuit_edges.h on PAIRS [(clean ids, corrupt ids, answer,
    against)]: every edge's exact effect, ACDC's trial effect and keep, EAP, faithfulness,
    minimality and completeness (each node of the circuit alone)."""
    torch = ref.torch
    graph = edge_graph(m)
    senders, receivers, edges = graph
    E = len(edges)
    with torch.no_grad():
        corrupt_runs = [assembled(m, P, graph, bad, a, b) for _, bad, a, b in pairs]
        clean_runs = [assembled(m, P, graph, ids, a, b) for ids, _, a, b in pairs]
    m_corrupt = sum(float(M) for M, _ in corrupt_runs)
    gap = sum(float(M) for M, _ in clean_runs) - m_corrupt

    def F_of(present):
        with torch.no_grad():
            total = sum(float(assembled(m, P, graph, ids, a, b, present, corrupt_runs[n][1])[0])
                        for n, (ids, _, a, b) in enumerate(pairs))
        return (total - m_corrupt) / gap

    full = [True] * E
    exact = []
    for e in range(E):
        without = list(full)
        without[e] = False
        exact.append(1.0 - F_of(without))
    present, acdc = list(full), [0.0] * E
    current = F_of(present)
    for r in reversed(range(len(receivers))):
        for e in reversed([e for e, (_, to) in enumerate(edges) if to == r]):
            present[e] = False
            trial = F_of(present)
            acdc[e] = current - trial
            if abs(current - trial) < threshold:
                current = trial
            else:
                present[e] = True
    faith = F_of(present)
    own = {}
    for e in range(E):
        if present[e]:
            without = list(present)
            without[e] = False
            own[e] = faith - F_of(without)
    nodes = sorted({s for e, (s, _) in enumerate(edges) if present[e] and s > 0})
    completeness = []
    for n in nodes:
        c_less = [p and edges[e][0] != n for e, p in enumerate(present)]
        m_less = [edges[e][0] != n for e in range(E)]
        completeness.append({"nodes": [senders[n][0]], "circuit": F_of(c_less), "model": F_of(m_less)})
    eap = [0.0] * E
    for n, (ids, _, a, b) in enumerate(pairs):
        T = ids.shape[1]
        probes = [torch.zeros(1, T, m["n_embd"], dtype=torch.float64, requires_grad=True) for _ in receivers]
        M, outs = assembled(m, P, graph, ids, a, b, probes=probes)
        M.backward()
        for e, (s, r) in enumerate(edges):
            diff = outs[s].detach() - corrupt_runs[n][1][s]
            eap[e] += float((diff * probes[r].grad).sum()) / gap
    return {"senders": [s[0] for s in senders], "receivers": [r[0] for r in receivers],
            "edges": [[senders[s][0], receivers[r][0]] for s, r in edges],
            "clean": (gap + m_corrupt) / len(pairs), "corrupt": m_corrupt / len(pairs),
            "exact": exact, "acdc": acdc, "kept": present, "eap": eap, "faithfulness": faith,
            "own": {str(e): v for e, v in own.items()}, "completeness": completeness}


def score_split(m, P, ids, layer, head, position):
    """Head HEAD of LAYER's score from POSITION on each key, as a [S][S] grid of query
    source x key source, with ln1's scale frozen: interp/score_split.h."""
    torch, F = ref.torch, ref.F
    logits, acts = forward(m, P, ids)
    H, D, eps = m["n_head"], m["n_embd"], float(m["norm_eps"])
    d = D // H
    T = ids.shape[1]
    names, parts = ["embed"], [acts["hook_embed"][0]]
    if m["position"] == "learned":
        names.append("pos_embed")
        parts.append(acts["hook_pos_embed"])
    for i in range(layer):
        b = f"blocks.{i}."
        Wo = P[b + "attn.out_proj.weight"]
        for h in range(H):
            names.append(f"L{i}.H{h}")
            parts.append(acts[b + "attn.hook_z"][0, h] @ Wo[:, h * d:(h + 1) * d].T)
        names.append(f"L{i}.mlp")
        parts.append(acts[b + "hook_mlp_out"][0])
    names.append("ln1.bias")
    b = f"blocks.{layer}."
    x = acts[b + "hook_resid_pre"][0]                                   # [T,D]
    sigma = torch.sqrt(x.var(dim=-1, unbiased=False, keepdim=True) + eps)
    gamma, beta = P[b + "ln1.weight"], P[b + "ln1.bias"]
    ln_parts = [(c - c.mean(dim=-1, keepdim=True)) / sigma * gamma for c in parts] + [beta.expand(T, D)]
    Wq = P[b + "attn.q_proj.weight"][head * d:(head + 1) * d]
    Wk = P[b + "attn.k_proj.weight"][head * d:(head + 1) * d]
    q = torch.stack([c @ Wq.T for c in ln_parts])[:, None]             # [S,1,T,d]
    k = torch.stack([c @ Wk.T for c in ln_parts])[:, None]
    if m["position"] == "rope":
        cos, sin = ref.rope_table(m["block_size"], d, m["rope_base"], x.dtype)
        q, k = ref.apply_rope(q, cos[:T], sin[:T]), ref.apply_rope(k, cos[:T], sin[:T])
    grid = torch.einsum("ad,bjd->jab", q[:, 0, position], k[:, 0]) / math.sqrt(d)   # [T,S,S]
    z = F.layer_norm(x, (D,), gamma, beta, eps)
    qs, ks = (z @ Wq.T)[None, None], (z @ Wk.T)[None, None]
    if m["position"] == "rope":
        qs, ks = ref.apply_rope(qs, cos[:T], sin[:T]), ref.apply_rope(ks, cos[:T], sin[:T])
    scores = (qs[0, 0, position] @ ks[0, 0].T) / math.sqrt(d)
    return {"sources": names, "scores": [float(s) for s in scores[:position + 1]],
            "parts": [[[float(v) for v in row] for row in grid[j]] for j in range(position + 1)]}


def edge_case(c):
    torch = ref.torch
    ck = ref.load_checkpoint(c["checkpoint"])
    m, vocab = ck["model"], ck["vocab"]
    P = {name: t.double() for name, t in ck["params"].items()}

    def ids(text, what):
        return torch.tensor([ref.encode(text, vocab, what)], dtype=torch.int64)

    pairs = [(ids(p["clean"], "clean"), ids(p["corrupt"], "corrupt"), vocab.index(p["answer"]), vocab.index(p["against"]))
             for p in c["pairs"]]
    out = dict(c)
    out["circuit"] = edge_circuit(m, P, pairs, c["threshold"])
    s = c["split"]
    with torch.no_grad():
        out["score_split"] = score_split(m, P, ids(s["text"], "text"), s["layer"], s["head"], s["position"])
    return out


def cmd_edge_circuits(args, reference):
    global ref
    ref = reference
    cases = [edge_case(c) for c in json.loads(args.cases)]
    ref.print_utf8(json.dumps({"generated_by": "scripts/torch_reference.py edge-circuits (float64)", "cases": cases},
                              ensure_ascii=False, indent=1))
