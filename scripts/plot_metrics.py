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
         "answer_finding_by_kind.KIND" for one question kind), 0 to 1, one line per head labelled with its name, L3.H1, for the first run only: when each head
         became what it is, under the jump of the probe curve it explains.

Pure standard library, so it runs wherever Python 3 does.
"""

import argparse
import json
import math
import os
import sys
from xml.sax.saxutils import escape as xml_escape

import script_io

COLOURS = ["#1f77b4", "#d62728", "#2ca02c", "#9467bd", "#ff7f0e", "#8c564b", "#e377c2", "#17becf"]
DASHES = ["6,3", "2,3", "10,3,2,3", "1,2", "12,4"]  # one per question kind
WIDTH = 960
LEFT, RIGHT, TOP = 70, 230, 40
PANEL, GAP, BOTTOM = 300, 60, 50  # panel height, space between the panels, below the lower one
ROLE_PANEL = 160  # height of each head-role panel
MAX_METRICS_BYTES = 256 << 20  # the explorer's limit on the same file (src/report/explorer.cpp)


# The loss axis: --floor and --loss-max in nats per symbol, at most MAX_LOSS (an entropy of
# 1000 nats is far past any vocabulary), and at least MIN_LOSS_SPAN between bottom and top.
MAX_LOSS = 1000.0
MIN_LOSS_SPAN = 0.001


def escape(text):
    """TEXT for XML character data: &, < and > escaped, control characters and lone
    surrogates (which XML forbids, and which would break the file) as '?'."""
    return xml_escape(script_io.printable(text))


def finite(value, low=-math.inf, high=math.inf):
    """VALUE as a float when it is a number (not a bool) in [low, high]; None otherwise,
    and None is drawn as a gap."""
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return None
    value = float(value)
    return value if math.isfinite(value) and low <= value <= high else None


def head_key(entry):
    """(layer, head) of a head_roles entry, or None when it is not an object with two
    non-negative integers there (such entries are skipped, never printed)."""
    if not isinstance(entry, dict):
        return None
    layer, head = entry.get("layer"), entry.get("head")
    if any(isinstance(v, bool) or not isinstance(v, int) or not 0 <= v < 1 << 31 for v in (layer, head)):
        return None
    return layer, head


def read_metrics(path):
    """steps and losses of every line; the evaluations as (step, val, probe, {kind: acc},
    [head_roles entries]). A loss, accuracy or score that is not a finite number in range
    is None (a gap); a line that is not a JSON object with a finite step is refused."""
    if os.path.isdir(path):
        path = os.path.join(path, "metrics.jsonl")
    text = script_io.read_text(path, "metrics file", MAX_METRICS_BYTES)
    steps, losses, evals, skipped = [], [], [], 0
    for number, line in enumerate(text.split("\n"), 1):
        line = line.strip()
        if not line:
            continue
        where = f"{script_io.quoted(path)}:{number}"
        try:
            row = json.loads(line, parse_constant=lambda name: None)  # NaN, Infinity: gaps
        except json.JSONDecodeError as e:
            raise script_io.ScriptError(f"{where}: invalid JSON at column {e.colno}: {e.msg}")
        except RecursionError:
            raise script_io.ScriptError(f"{where}: invalid JSON: nested too deep")
        if not isinstance(row, dict):
            raise script_io.ScriptError(f"{where}: expected a JSON object")
        step = finite(row.get("step"), 0)
        if step is None:
            raise script_io.ScriptError(f"{where}: \"step\" must be a finite number >= 0, "
                                        f"found {script_io.shown(row.get('step'))}")
        if "loss" in row:
            steps.append(step)
            losses.append(finite(row["loss"], 0))
        if "val_loss" in row:
            by_kind = row.get("probe_accuracy_by_kind")
            by_kind = {k: finite(v, 0, 1) for k, v in by_kind.items()} if isinstance(by_kind, dict) else {}
            roles = row.get("head_roles")
            roles = roles if isinstance(roles, list) else []
            skipped += sum(1 for h in roles if not head_key(h))
            roles = [h for h in roles if head_key(h)]
            evals.append((step, finite(row["val_loss"], 0), finite(row.get("probe_accuracy"), 0, 1), by_kind, roles))
    if not steps:
        raise script_io.ScriptError(f"{script_io.quoted(path)}: no step/loss lines")
    if skipped:
        print(f"plot_metrics: warning: {script_io.quoted(path)}: skipped {skipped} head_roles "
              f"{'entry' if skipped == 1 else 'entries'} without an integer layer and head", file=sys.stderr)
    return steps, losses, evals


def smooth(values, window):
    """The moving average of the last WINDOW values; a None (a gap) restarts it."""
    out, run = [], []
    for v in values:
        if v is None:
            out.append(None)
            run = []
            continue
        run.append(v)
        if len(run) > window:
            run.pop(0)
        out.append(math.fsum(run) / len(run))
    return out


def nice_ticks(lo, hi, count=6):
    """About COUNT round values in [lo, hi]: multiples of a step counted by index, never by
    adding the step to itself (a step below the values' precision would add nothing, and
    the list would grow until memory ran out); at most 2 * COUNT + 1 of them."""
    span = hi - lo if hi > lo else 1.0
    step = 10 ** math.floor(math.log10(span / count))
    for m in (1, 2, 5, 10):
        if span / (step * m) <= count:
            step *= m
            break
    first = math.ceil(lo / step)
    n = min(math.floor(hi / step + 1e-9) - first + 1, 2 * count + 1)
    return [round((first + i) * step, 10) for i in range(max(n, 0))]


def log_ticks(max_step):
    """1, 2, 5, 10, 20, 50, ... up to max_step."""
    ticks, decade = [], 1
    while decade <= max_step:
        ticks.extend(t for t in (decade, 2 * decade, 5 * decade) if t <= max_step)
        decade *= 10
    return ticks


def polyline(points, colour, width, dash=None, opacity=None):
    """One polyline per run of points between gaps (a point whose y is None)."""
    segments, current = [], []
    for px, py in points:
        if py is None:
            if current:
                segments.append(current)
            current = []
        else:
            current.append((px, py))
    if current:
        segments.append(current)
    extra = (f' stroke-dasharray="{dash}"' if dash else "") + (f' opacity="{opacity}"' if opacity else "")
    out = []
    for segment in segments:
        kept = []  # at most one point per pixel column: a 10,000-step run stays a small file
        for px, py in segment:
            if kept and px - kept[-1][0] < 1.0 and (px, py) != segment[-1]:
                continue
            kept.append((px, py))
        coords = " ".join(f"{px:.1f},{py:.1f}" for px, py in kept)
        out.append(f'<polyline fill="none" stroke="{colour}" stroke-width="{width}"{extra} points="{coords}"/>')
    return "\n".join(out)


def role_score(head, score):
    """head[score], or head[a][b] for a score named "a.b" (answer_finding_by_kind.who)."""
    value = head
    for part in score.split("."):
        value = value.get(part) if isinstance(value, dict) else None
    return finite(value, 0, 1)


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
        heads.extend(head_key(h) for h in e[4] if head_key(h) not in heads)
    ends = []
    for i, key in enumerate(heads):
        points = [(x(e[0]), y(role_score(h, score))) for e in evals for h in e[4]
                  if head_key(h) == key and role_score(h, score) is not None]
        if not points:
            continue
        colour = COLOURS[i % len(COLOURS)]
        out.append(polyline(points, colour, 1.6, dash=DASHES[(i // len(COLOURS)) % len(DASHES)] if i >= len(COLOURS) else None))
        ends.append((points[-1][1], f"L{key[0]}.H{key[1]}", colour))
    ends.sort()
    last_y = -1e9
    for py, label, colour in ends:  # labels at the right edge, pushed apart so they do not overlap
        py = max(py, last_y + 12)
        last_y = py
        out.append(f'<text x="{plot_right + 6}" y="{py + 4:.1f}" fill="{colour}">{escape(label)}</text>')
    return out


def main():
    parser = script_io.ArgumentParser(prog="plot_metrics", description=__doc__,
                                      formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("runs", nargs="+", help="run directories or metrics.jsonl files")
    parser.add_argument("-o", "--output", default="learning_curves.svg", help="SVG file to write")
    parser.add_argument("--smooth", type=script_io.int_in(1, 10**9), default=50,
                        help="moving-average window for the training loss (>= 1)")
    parser.add_argument("--floor", type=script_io.float_in(0, MAX_LOSS),
                        help="entropy floor of the validation rows (nats/symbol), drawn dashed")
    parser.add_argument("--loss-max", type=script_io.float_in(0, MAX_LOSS),
                        help="top of the loss axis (default: floor + 0.6, or the data's top)")
    parser.add_argument("--target", type=script_io.finite_float, default=0.95,
                        help="probe accuracy drawn dotted (default 0.95)")
    parser.add_argument("--title", default="", help="a title line above the panels")
    parser.add_argument("--role-scores", default="answer_finding,previous_token,induction",
                        help="head-role scores to draw, one panel each (comma-separated; '' for none)")
    args = parser.parse_args()
    if not 0 <= args.target <= 1:
        parser.error(f"--target must be in [0, 1], found {args.target:g}")
    script_io.check_output_path(args.output)  # refused before any reading, not after

    runs = [(r.rstrip("/") or r, read_metrics(r)) for r in args.runs]
    max_step = max(max(steps) for _, (steps, _, _) in runs)
    values = [v for _, (_, losses, evals) in runs for v in smooth(losses, args.smooth) + [e[1] for e in evals]
              if v is not None]
    if not values:
        raise script_io.ScriptError("no finite loss in any run: nothing to draw")
    lo = min(values + ([args.floor] if args.floor is not None else []))
    lo = math.floor((lo - 0.02) * 20) / 20  # a little below the floor, on a 0.05 line
    if args.loss_max is not None:
        hi = args.loss_max
    elif args.floor is not None:
        hi = args.floor + 0.6
    else:
        hi = max(values)
    if hi - lo < MIN_LOSS_SPAN:
        raise script_io.ScriptError(f"--loss-max {hi!r} is not at least {MIN_LOSS_SPAN:g} above the axis's bottom {lo:g}")
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
        return None if loss is None else loss_top + PANEL * (hi - min(max(loss, lo), hi)) / (hi - lo)

    def y_probe(acc):
        return None if acc is None else probe_top + PANEL * (1.0 - acc)

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
            out.extend(f'<circle cx="{x(e[0]):.1f}" cy="{y_loss(e[1]):.1f}" r="2.5" fill="{colour}"/>' for e in evals
                       if e[1] is not None)
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
        if evals and evals[-1][1] is not None:
            last = evals[-1]
            lines = [f"final val {last[1]:.4f}" + (f" (floor + {last[1] - args.floor:.3f})" if args.floor is not None else "")]
            if last[2] is not None:
                lines.append(f"final probe {last[2]:.3f}")
                lines.append(", ".join(f"{kind} {acc:.3f}" for kind, acc in last[3].items() if acc is not None))
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
    script_io.write_atomically(args.output, "\n".join(out) + "\n")
    print(f"wrote {script_io.printable(args.output)}")


if __name__ == "__main__":
    script_io.run_main("plot_metrics", main)
