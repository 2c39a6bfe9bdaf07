#!/usr/bin/env python3
"""Lesson 12's toy in PyTorch, as the lesson writes it, printed as one JSON object for
`mini-gpt lesson 12` to be checked against (tests/lesson_test.cpp runs it when PyTorch is
installed; Debian's python3-torch: run it with /usr/bin/python3):

    /usr/bin/python3 scripts/torch_lesson12.py

torch.manual_seed(42), four nn.Linear(4, 4, bias=False), x = 0..11 as [1,3,4]; prints the
four weights (row-major [out,in]), each head's projected_weights row at position 1 in
float32 and, from the same float32 weights, in float64, the split of 0..11, and the two
check questions' head 0, position 1. Exit 3 when PyTorch is not installed, 2 on bad usage.
"""

import json
import math
import sys


def split_heads(x, heads):
    batch, positions, width = x.shape
    return x.reshape(batch, positions, heads, width // heads).transpose(1, 2)


def merge_heads(x):
    batch, heads, positions, width = x.shape
    return x.transpose(1, 2).contiguous().reshape(batch, positions, heads * width)


def causal_weights(q, k):
    import torch
    scores = q @ k.transpose(-2, -1) / math.sqrt(q.shape[-1])
    T = q.shape[-2]
    visible = torch.ones(T, T, dtype=torch.bool).tril()
    return torch.softmax(scores.masked_fill(~visible, float("-inf")), dim=-1)


def main():
    if len(sys.argv) > 1:
        print("torch_lesson12.py: error: takes no arguments", file=sys.stderr)
        return 2
    try:
        import torch
        from torch import nn
    except ImportError:
        print("torch_lesson12.py: error: PyTorch is not installed (apt-get install python3-torch; run with /usr/bin/python3)",
              file=sys.stderr)
        return 3
    torch.manual_seed(42)
    projections = [nn.Linear(4, 4, bias=False) for _ in range(4)]  # q, k, v, out, in the lesson's order
    x = torch.arange(12, dtype=torch.float32).reshape(1, 3, 4)
    heads = split_heads(x, 2)
    with torch.no_grad():
        q, k, v = (split_heads(p(x), 2) for p in projections[:3])
        weights = causal_weights(q, k)
        weights64 = causal_weights(q.double(), k.double())
        context = weights @ v
        output = projections[3](merge_heads(context))
    short_x = torch.arange(8, dtype=torch.float32).reshape(1, 2, 4)
    out = {
        "torch": torch.__version__,
        "weights": {name: p.weight.flatten().tolist() for name, p in zip(("q_proj", "k_proj", "v_proj", "out_proj"), projections)},
        "position1_float32": [weights[0, h, 1].tolist() for h in range(2)],
        "position1_float64": [weights64[0, h, 1].tolist() for h in range(2)],
        "context": context.flatten().tolist(),
        "output": output.flatten().tolist(),
        "split_position1": [heads[0, h, 1].tolist() for h in range(2)],
        "round_trip": bool(torch.equal(merge_heads(heads), x)),
        "one_head_position1": split_heads(x, 1)[0, 0, 1].tolist(),
        "correct_position1": split_heads(short_x, 2)[0, 0, 1].tolist(),
        "wrong_position1": short_x.reshape(1, 2, 2, 2)[0, 0, 1].tolist(),
    }
    print(json.dumps(out))
    return 0


if __name__ == "__main__":
    sys.exit(main())
