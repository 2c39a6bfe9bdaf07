#!/usr/bin/env python3
"""Draw the loss curves of one or more mini-gpt runs into one SVG.

    python3 scripts/plot_metrics.py runs/default runs/other -o curves.svg

Each argument is a run directory (or its metrics.jsonl). For every run the training
loss is drawn as a thin line and the validation loss as a thick one with dots. Pure
standard library, so it runs wherever Python 3 does.
"""

import argparse
import json
import math
import os
import sys
from xml.sax.saxutils import escape

COLOURS = ["#1f77b4", "#d62728", "#2ca02c", "#9467bd", "#ff7f0e", "#8c564b", "#e377c2", "#17becf"]
WIDTH, HEIGHT = 900, 520
LEFT, RIGHT, TOP, BOTTOM = 70, 200, 40, 55


def read_metrics(path):
    if os.path.isdir(path):
        path = os.path.join(path, "metrics.jsonl")
    steps, losses, val_steps, vals = [], [], [], []
    try:
        with open(path, encoding="utf-8") as f:
            for number, line in enumerate(f, 1):
                line = line.strip()
                if not line:
                    continue
                try:
                    row = json.loads(line)
                except json.JSONDecodeError as e:
                    raise SystemExit(f"plot_metrics: error: {path}:{number}: invalid JSON: {e.msg}")
                if "step" in row and "loss" in row:
                    steps.append(row["step"])
                    losses.append(row["loss"])
                if "val_loss" in row:
                    val_steps.append(row["step"])
                    vals.append(row["val_loss"])
    except OSError as e:
        raise SystemExit(f"plot_metrics: error: {path}: {e.strerror}")
    if not steps:
        raise SystemExit(f"plot_metrics: error: {path}: no step/loss lines")
    return steps, losses, val_steps, vals


def smooth(values, window):
    out, acc = [], 0.0
    for i, v in enumerate(values):
        acc += v
        if i >= window:
            acc -= values[i - window]
        out.append(acc / min(i + 1, window))
    return out


def nice_ticks(lo, hi, count=6):
    span = hi - lo if hi > lo else 1.0
    step = 10 ** math.floor(math.log10(span / count))
    for m in (1, 2, 5, 10):
        if span / (step * m) <= count:
            step *= m
            break
    first = math.ceil(lo / step) * step
    ticks, t = [], first
    while t <= hi + 1e-12:
        ticks.append(round(t, 10))
        t += step
    return ticks


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("runs", nargs="+", help="run directories or metrics.jsonl files")
    parser.add_argument("-o", "--output", default="loss_curves.svg", help="SVG file to write")
    parser.add_argument("--smooth", type=int, default=20, help="moving-average window for the training loss")
    args = parser.parse_args()

    runs = [(r.rstrip("/"), read_metrics(r)) for r in args.runs]
    max_step = max(max(s) for _, (s, _, _, _) in runs)
    all_losses = [v for _, (_, l, _, vv) in runs for v in smooth(l, args.smooth) + vv]
    lo, hi = min(all_losses), max(all_losses)
    lo, hi = lo - 0.05 * (hi - lo), hi + 0.05 * (hi - lo)

    def x(step):
        return LEFT + (WIDTH - LEFT - RIGHT) * step / max(max_step, 1)

    def y(loss):
        return TOP + (HEIGHT - TOP - BOTTOM) * (hi - loss) / (hi - lo)

    out = [f'<svg xmlns="http://www.w3.org/2000/svg" width="{WIDTH}" height="{HEIGHT}" '
           f'font-family="sans-serif" font-size="12">',
           f'<rect width="{WIDTH}" height="{HEIGHT}" fill="white"/>',
           f'<text x="{LEFT}" y="22" font-size="15">mini-gpt loss (nats/symbol); thin: train '
           f'(moving average of {args.smooth}), thick: validation</text>']
    for t in nice_ticks(lo, hi):
        out.append(f'<line x1="{LEFT}" x2="{WIDTH - RIGHT}" y1="{y(t):.1f}" y2="{y(t):.1f}" stroke="#ddd"/>')
        out.append(f'<text x="{LEFT - 8}" y="{y(t) + 4:.1f}" text-anchor="end">{t:g}</text>')
    for t in nice_ticks(0, max_step):
        out.append(f'<line x1="{x(t):.1f}" x2="{x(t):.1f}" y1="{TOP}" y2="{HEIGHT - BOTTOM}" stroke="#eee"/>')
        out.append(f'<text x="{x(t):.1f}" y="{HEIGHT - BOTTOM + 18}" text-anchor="middle">{t:g}</text>')
    out.append(f'<text x="{(LEFT + WIDTH - RIGHT) / 2}" y="{HEIGHT - 12}" text-anchor="middle">step</text>')
    for i, (name, (steps, losses, val_steps, vals)) in enumerate(runs):
        colour = COLOURS[i % len(COLOURS)]
        points = " ".join(f"{x(s):.1f},{y(v):.1f}" for s, v in zip(steps, smooth(losses, args.smooth)))
        out.append(f'<polyline fill="none" stroke="{colour}" stroke-width="1" opacity="0.6" points="{points}"/>')
        if vals:
            points = " ".join(f"{x(s):.1f},{y(v):.1f}" for s, v in zip(val_steps, vals))
            out.append(f'<polyline fill="none" stroke="{colour}" stroke-width="2.5" points="{points}"/>')
            for s, v in zip(val_steps, vals):
                out.append(f'<circle cx="{x(s):.1f}" cy="{y(v):.1f}" r="3" fill="{colour}"/>')
        label = escape(os.path.basename(name) or name)
        best = f" (best val {min(vals):.3f})" if vals else ""
        ly = TOP + 20 + 36 * i
        out.append(f'<rect x="{WIDTH - RIGHT + 15}" y="{ly - 9}" width="14" height="4" fill="{colour}"/>')
        out.append(f'<text x="{WIDTH - RIGHT + 35}" y="{ly - 3}">{label}</text>')
        out.append(f'<text x="{WIDTH - RIGHT + 35}" y="{ly + 12}" fill="#555">{escape(best)}</text>')
    out.append("</svg>")
    with open(args.output, "w", encoding="utf-8") as f:
        f.write("\n".join(out) + "\n")
    print(f"wrote {args.output}")


if __name__ == "__main__":
    sys.exit(main())
