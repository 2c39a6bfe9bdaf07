#!/usr/bin/env python3
"""Draw the learning curves of one or more mini-gpt runs into one SVG.

    python3 scripts/plot_metrics.py runs/default --floor 0.6126 -o curves.svg
    python3 scripts/plot_metrics.py runs/default runs/other --floor 0.6126 -o compare.svg

Each argument is a run directory (or its metrics.jsonl). Two panels share a logarithmic
step axis, so the plateaus and jumps of a long run get the width the first hundred steps
would otherwise take:

  loss   the training loss (thin, moving average) and the validation loss (thick, dots),
         from just below the entropy floor (--floor, drawn as a dashed line; data/README.md
         states it) up to --loss-max (default: the floor + 0.6), so the last tenths of a
         nat above the floor are where the height goes; higher values are clipped at the top;
  probe  the probe accuracy (thick) and the accuracy per question kind (thin, one dash
         pattern per kind) from metrics.jsonl's "probe_accuracy_by_kind", 0 to 1, with
         --target drawn as a dotted line;
  roles  one panel per head-role score of --role-scores (default answer_finding,
         previous_token, induction; any key of metrics.jsonl's "head_roles" entries, and
         "answer_finding_by_kind.KIND" for one question kind), 0 to 1, one line per head labelled layer.head, for the first run only: when each head
         became what it is, under the jump of the probe curve it explains.

Pure standard library, so it runs wherever Python 3 does.
"""

import argparse
import json
import math
import os
import sys
from xml.sax.saxutils import escape

COLOURS = ["#1f77b4", "#d62728", "#2ca02c", "#9467bd", "#ff7f0e", "#8c564b", "#e377c2", "#17becf"]
DASHES = ["6,3", "2,3", "10,3,2,3", "1,2", "12,4"]  # one per question kind
WIDTH = 960
LEFT, RIGHT, TOP = 70, 230, 40
PANEL, GAP, BOTTOM = 300, 60, 50  # panel height, space between the panels, below the lower one
ROLE_PANEL = 160  # height of each head-role panel


def read_metrics(path):
    """steps and losses of every line; the evaluations as (step, val, probe, {kind: acc})."""
    if os.path.isdir(path):
        path = os.path.join(path, "metrics.jsonl")
    steps, losses, evals = [], [], []
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
                    evals.append((row["step"], row["val_loss"], row.get("probe_accuracy"),
                                  row.get("probe_accuracy_by_kind") or {}, row.get("head_roles") or []))
    except OSError as e:
        raise SystemExit(f"plot_metrics: error: {path}: {e.strerror}")
    if not steps:
        raise SystemExit(f"plot_metrics: error: {path}: no step/loss lines")
    return steps, losses, evals


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


def log_ticks(max_step):
    """1, 2, 5, 10, 20, 50, ... up to max_step."""
    ticks, decade = [], 1
    while decade <= max_step:
        ticks.extend(t for t in (decade, 2 * decade, 5 * decade) if t <= max_step)
        decade *= 10
    return ticks


def polyline(points, colour, width, dash=None, opacity=None):
    kept = []  # at most one point per pixel column: a 10,000-step run stays a small file
    for px, py in points:
        if kept and px - kept[-1][0] < 1.0 and (px, py) != points[-1]:
            continue
        kept.append((px, py))
    points = kept
    extra = (f' stroke-dasharray="{dash}"' if dash else "") + (f' opacity="{opacity}"' if opacity else "")
    coords = " ".join(f"{px:.1f},{py:.1f}" for px, py in points)
    return f'<polyline fill="none" stroke="{colour}" stroke-width="{width}"{extra} points="{coords}"/>'


def role_score(head, score):
    """head[score], or head[a][b] for a score named "a.b" (answer_finding_by_kind.who)."""
    value = head
    for part in score.split("."):
        value = value.get(part) if isinstance(value, dict) else None
    return value if isinstance(value, (int, float)) else None


def role_panel(evals, score, top, x, plot_right, max_step, run_name):
    """One head-role score of every head against step: a line per head, labelled at its end."""
    def y(v):
        return top + ROLE_PANEL * (1.0 - min(max(v, 0.0), 1.0))
    out = [f'<text x="{LEFT}" y="{top - 6}" font-size="13">head role score "{escape(score)}" per head '
           f'(layer.head), {escape(os.path.basename(run_name) or run_name)}</text>',
           f'<rect x="{LEFT}" y="{top}" width="{plot_right - LEFT}" height="{ROLE_PANEL}" fill="none" stroke="#999"/>']
    for t in (0, 0.25, 0.5, 0.75, 1.0):
        out.append(f'<line x1="{LEFT}" x2="{plot_right}" y1="{y(t):.1f}" y2="{y(t):.1f}" stroke="#ddd"/>')
        out.append(f'<text x="{LEFT - 8}" y="{y(t) + 4:.1f}" text-anchor="end">{t:g}</text>')
    for t in log_ticks(max_step):
        out.append(f'<line x1="{x(t):.1f}" x2="{x(t):.1f}" y1="{top}" y2="{top + ROLE_PANEL}" stroke="#eee"/>')
        out.append(f'<text x="{x(t):.1f}" y="{top + ROLE_PANEL + 16}" text-anchor="middle">{t:g}</text>')
    heads = []  # (layer, head) in order of appearance
    for e in evals:
        heads.extend((h["layer"], h["head"]) for h in e[4] if (h["layer"], h["head"]) not in heads)
    ends = []
    for i, key in enumerate(heads):
        points = [(x(e[0]), y(role_score(h, score))) for e in evals for h in e[4]
                  if (h["layer"], h["head"]) == key and role_score(h, score) is not None]
        if not points:
            continue
        colour = COLOURS[i % len(COLOURS)]
        out.append(polyline(points, colour, 1.6, dash=DASHES[(i // len(COLOURS)) % len(DASHES)] if i >= len(COLOURS) else None))
        ends.append((points[-1][1], f"{key[0]}.{key[1]}", colour))
    ends.sort()
    last_y = -1e9
    for py, label, colour in ends:  # labels at the right edge, pushed apart so they do not overlap
        py = max(py, last_y + 12)
        last_y = py
        out.append(f'<text x="{plot_right + 6}" y="{py + 4:.1f}" fill="{colour}">{label}</text>')
    return out


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("runs", nargs="+", help="run directories or metrics.jsonl files")
    parser.add_argument("-o", "--output", default="learning_curves.svg", help="SVG file to write")
    parser.add_argument("--smooth", type=int, default=50, help="moving-average window for the training loss")
    parser.add_argument("--floor", type=float, help="entropy floor of the validation rows (nats/symbol), drawn dashed")
    parser.add_argument("--loss-max", type=float, help="top of the loss axis (default: floor + 0.6, or the data's top)")
    parser.add_argument("--target", type=float, default=0.95, help="probe accuracy drawn dotted (default 0.95)")
    parser.add_argument("--title", default="", help="a title line above the panels")
    parser.add_argument("--role-scores", default="answer_finding,previous_token,induction",
                        help="head-role scores to draw, one panel each (comma-separated; '' for none)")
    args = parser.parse_args()

    runs = [(r.rstrip("/"), read_metrics(r)) for r in args.runs]
    max_step = max(max(steps) for _, (steps, _, _) in runs)
    values = [v for _, (_, losses, evals) in runs for v in smooth(losses, args.smooth) + [e[1] for e in evals]]
    lo = min(values + ([args.floor] if args.floor is not None else []))
    lo = math.floor((lo - 0.02) * 20) / 20  # a little below the floor, on a 0.05 line
    if args.loss_max is not None:
        hi = args.loss_max
    elif args.floor is not None:
        hi = args.floor + 0.6
    else:
        hi = max(values)
    if hi <= lo:
        raise SystemExit(f"plot_metrics: error: --loss-max {hi} is not above the axis's bottom {lo}")
    first_evals = runs[0][1][2]
    role_scores = [r for r in args.role_scores.split(",") if r and any(
        role_score(h, r) is not None for e in first_evals for h in e[4])]
    height = TOP + 2 * PANEL + GAP + BOTTOM + len(role_scores) * (ROLE_PANEL + GAP)
    plot_right = WIDTH - RIGHT
    loss_top, probe_top = TOP, TOP + PANEL + GAP
    role_tops = [probe_top + PANEL + GAP + i * (ROLE_PANEL + GAP) for i in range(len(role_scores))]

    def x(step):
        return LEFT + (plot_right - LEFT) * math.log10(max(step, 1)) / math.log10(max(max_step, 10))

    def y_loss(loss):
        return loss_top + PANEL * (hi - min(max(loss, lo), hi)) / (hi - lo)

    def y_probe(acc):
        return probe_top + PANEL * (1.0 - acc)

    out = [f'<svg xmlns="http://www.w3.org/2000/svg" width="{WIDTH}" height="{height}" '
           f'font-family="sans-serif" font-size="12">',
           f'<rect width="{WIDTH}" height="{height}" fill="white"/>']
    if args.title:
        out.append(f'<text x="{LEFT}" y="20" font-size="15">{escape(args.title)}</text>')
    out.append(f'<text x="{LEFT}" y="{loss_top - 6}" font-size="13">loss, nats/symbol: thin train (moving average '
               f'of {args.smooth}), thick validation{", dashed the entropy floor" if args.floor is not None else ""}</text>')
    out.append(f'<text x="{LEFT}" y="{probe_top - 6}" font-size="13">probe accuracy: thick overall, thin per kind'
               f' (dash pattern), dotted {args.target:g}</text>')
    for top, ticks, ypos, fmt in ((loss_top, nice_ticks(lo, hi), y_loss, "{:g}"),
                                  (probe_top, [0, 0.2, 0.4, 0.6, 0.8, 1.0], y_probe, "{:.1f}")):
        out.append(f'<rect x="{LEFT}" y="{top}" width="{plot_right - LEFT}" height="{PANEL}" fill="none" stroke="#999"/>')
        for t in ticks:
            out.append(f'<line x1="{LEFT}" x2="{plot_right}" y1="{ypos(t):.1f}" y2="{ypos(t):.1f}" stroke="#ddd"/>')
            out.append(f'<text x="{LEFT - 8}" y="{ypos(t) + 4:.1f}" text-anchor="end">{fmt.format(t)}</text>')
        for t in log_ticks(max_step):
            out.append(f'<line x1="{x(t):.1f}" x2="{x(t):.1f}" y1="{top}" y2="{top + PANEL}" stroke="#eee"/>')
            out.append(f'<text x="{x(t):.1f}" y="{top + PANEL + 16}" text-anchor="middle">{t:g}</text>')
    out.append(f'<text x="{(LEFT + plot_right) / 2}" y="{height - 12}" text-anchor="middle">step (log scale)</text>')
    if args.floor is not None:
        out.append(f'<line x1="{LEFT}" x2="{plot_right}" y1="{y_loss(args.floor):.1f}" y2="{y_loss(args.floor):.1f}" '
                   f'stroke="black" stroke-dasharray="6,4"/>')
        out.append(f'<text x="{plot_right - 4}" y="{y_loss(args.floor) + 14:.1f}" text-anchor="end">'
                   f'entropy floor {args.floor:g}</text>')
    out.append(f'<line x1="{LEFT}" x2="{plot_right}" y1="{y_probe(args.target):.1f}" y2="{y_probe(args.target):.1f}" '
               f'stroke="black" stroke-dasharray="1,3"/>')
    for score, top in zip(role_scores, role_tops):
        out.extend(role_panel(first_evals, score, top, x, plot_right, max_step, runs[0][0]))

    kinds = []  # every kind of every run, in order of first appearance: one dash pattern each
    for _, (_, _, evals) in runs:
        for e in evals:
            kinds.extend(k for k in e[3] if k not in kinds)
    legend_y = TOP + 14
    for i, (name, (steps, losses, evals)) in enumerate(runs):
        colour = COLOURS[i % len(COLOURS)]
        out.append(polyline([(x(s), y_loss(v)) for s, v in zip(steps, smooth(losses, args.smooth))], colour, 1,
                            opacity="0.6"))
        if evals:
            out.append(polyline([(x(e[0]), y_loss(e[1])) for e in evals], colour, 2.5))
            out.extend(f'<circle cx="{x(e[0]):.1f}" cy="{y_loss(e[1]):.1f}" r="2.5" fill="{colour}"/>' for e in evals)
        probed = [e for e in evals if e[2] is not None]
        if probed:
            out.append(polyline([(x(e[0]), y_probe(e[2])) for e in probed], colour, 2.5))
        for k, kind in enumerate(kinds):
            points = [(x(e[0]), y_probe(e[3][kind])) for e in probed if kind in e[3]]
            if points:
                out.append(polyline(points, colour, 1.2, dash=DASHES[k % len(DASHES)]))
        label = escape(os.path.basename(name) or name)
        out.append(f'<rect x="{plot_right + 15}" y="{legend_y - 9}" width="14" height="4" fill="{colour}"/>')
        out.append(f'<text x="{plot_right + 35}" y="{legend_y - 3}">{label}</text>')
        if evals:
            last = evals[-1]
            lines = [f"final val {last[1]:.4f}" + (f" (floor + {last[1] - args.floor:.3f})" if args.floor is not None else "")]
            if last[2] is not None:
                lines.append(f"final probe {last[2]:.3f}")
                lines.append(", ".join(f"{kind} {acc:.3f}" for kind, acc in last[3].items()))
            for j, text in enumerate(lines):
                out.append(f'<text x="{plot_right + 35}" y="{legend_y + 12 + 14 * j}" fill="#555">{escape(text)}</text>')
            legend_y += 14 * len(lines)
        legend_y += 30
    ky = probe_top + 14
    for k, kind in enumerate(kinds):
        out.append(f'<line x1="{plot_right + 15}" x2="{plot_right + 45}" y1="{ky + 18 * k - 4}" y2="{ky + 18 * k - 4}" '
                   f'stroke="#333" stroke-width="1.2" stroke-dasharray="{DASHES[k % len(DASHES)]}"/>')
        out.append(f'<text x="{plot_right + 52}" y="{ky + 18 * k}">{escape(kind)}</text>')
    out.append("</svg>")
    try:
        with open(args.output, "w", encoding="utf-8") as f:
            f.write("\n".join(out) + "\n")
    except OSError as e:
        raise SystemExit(f"plot_metrics: error: {args.output}: {e.strerror}")
    print(f"wrote {args.output}")


if __name__ == "__main__":
    sys.exit(main())
