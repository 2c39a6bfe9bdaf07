// Drawing shared by mini-gpt's two pages, the head explorer (inspect-heads --html) and the
// live page of `mini-gpt serve`: elements, canvases at the device's pixel ratio, the colour
// scales, the heatmap image and its labelled form, the patching legend, the run's charts.
// Loaded after words.js (every word it draws is mgWords.t's) and before each page's own
// script; its names are the fields of mgDraw.
'use strict';

const mgDraw = (function () {
  const t = mgWords.t;
  const CELL = 26, STRIP_ROW = 18;  // one symbol's column and one head's row of the strips, CSS pixels
  const PALETTE = ['#1f77b4', '#d62728', '#2ca02c', '#9467bd', '#ff7f0e', '#17becf', '#8c564b', '#e377c2'];
  const fixed = (x, n) => (x === null || x === undefined ? '–' : Number(x).toFixed(n));
  const signed = (x, n) => (x === null || x === undefined ? '–' : (x >= 0 ? '+' : '') + Number(x).toFixed(n));
  const headColour = (h) => PALETTE[h % PALETTE.length];
  // How a symbol is shown, as report/text.cpp's symbol_label shows it in every CLI text: a
  // newline as "\n", a tab "\t", a space "␣", another control character as U+XXXX.
  function symbolLabel(s) {
    if (s === '\n') return '\\n';
    if (s === '\t') return '\\t';
    if (s === '\r') return '\\r';
    if (s === ' ') return '\u2423';
    const c = s.codePointAt(0);
    if (s.length <= 2 && (c < 0x20 || (c >= 0x7f && c < 0xa0)))
      return 'U+' + c.toString(16).toUpperCase().padStart(4, '0');
    return s;
  }
  function el(tag, attrs, ...children) {
    const e = document.createElement(tag);
    for (const [k, v] of Object.entries(attrs || {})) {
      if (k === 'class') e.className = v;
      else if (k === 'text') e.textContent = v;
      else e.setAttribute(k, v);
    }
    for (const c of children) e.append(c);
    return e;
  }

  // A canvas of css size w x h drawn at the device's pixel ratio.
  function sizeCanvas(canvas, w, h) {
    const ratio = window.devicePixelRatio || 1;
    canvas.width = Math.round(w * ratio);
    canvas.height = Math.round(h * ratio);
    canvas.style.width = w + 'px';
    canvas.style.height = h + 'px';
    const ctx = canvas.getContext('2d');
    ctx.setTransform(ratio, 0, 0, ratio, 0, 0);
    return ctx;
  }

  // "Blues" from white (0) to dark blue (1), as the SVG heatmaps of inspect-heads --svg.
  const BLUES = [[247, 251, 255], [222, 235, 247], [198, 219, 239], [158, 202, 225], [107, 174, 214],
    [66, 146, 198], [33, 113, 181], [8, 81, 156], [8, 48, 107]];
  function blues(w) {
    const x = Math.min(1, Math.max(0, w)) * 8, i = Math.min(7, Math.floor(x)), f = x - i;
    return BLUES[i].map((c, k) => Math.round(c + f * (BLUES[i + 1][k] - c)));
  }
  // A T x T heatmap into an ImageData of one pixel per cell (masked keys grey); W holds the
  // lower triangle row by row (query t: keys 0..t), as the explorer's data and the server's.
  function heatmapImage(ctx, T, w) {
    const image = ctx.createImageData(T, T);
    let k = 0;
    for (let t = 0; t < T; t++) {
      for (let s = 0; s < T; s++) {
        const p = 4 * (t * T + s);
        const rgb = s <= t ? blues(w[k++]) : [217, 217, 217];
        image.data[p] = rgb[0]; image.data[p + 1] = rgb[1]; image.data[p + 2] = rgb[2]; image.data[p + 3] = 255;
      }
    }
    return image;
  }

  // A T x T heatmap of the lower triangle W on CANVAS, CELL css pixels a cell, with the
  // symbols LABELS down the left (the query, a row) and across the top (the key, a column);
  // where cells are too small to read a label, every k-th. Returns the grid's offset and
  // cell size, for reading a hover.
  function labelledHeatmap(canvas, labels, w, cell) {
    const T = labels.length, left = 24, top = 20;
    const ctx = sizeCanvas(canvas, left + T * cell, top + T * cell);
    const image = document.createElement('canvas');
    image.width = T;
    image.height = T;
    const ictx = image.getContext('2d');
    ictx.putImageData(heatmapImage(ictx, T, w), 0, 0);
    ctx.imageSmoothingEnabled = false;
    ctx.drawImage(image, left, top, T * cell, T * cell);
    const every = Math.max(1, Math.ceil(13 / cell));
    ctx.font = `${Math.min(13, Math.max(9, cell - 2))}px sans-serif`;
    ctx.fillStyle = '#1a1a1a';
    ctx.textAlign = 'center';
    for (let s = 0; s < T; s += every) ctx.fillText(labels[s], left + (s + 0.5) * cell, top - 5);
    ctx.textAlign = 'right';
    for (let r = 0; r < T; r += every) ctx.fillText(labels[r], left - 4, top + (r + 0.5) * cell + 4);
    return { left, top, cell };
  }

  // One head's row of the strips at height Y: the weight WEIGHT(s) query T gives each key s
  // as the opacity of COLOUR, the masked keys after T grey, across N symbols.
  function drawStripRow(ctx, y, colour, weight, t, n) {
    ctx.fillStyle = colour;
    for (let s = 0; s <= t; s++) {
      ctx.globalAlpha = Math.max(0.03, weight(s));
      ctx.fillRect(s * CELL + 1, y + 1, CELL - 2, STRIP_ROW - 2);
    }
    ctx.globalAlpha = 1;
    ctx.fillStyle = '#ececec';
    for (let s = t + 1; s < n; s++) ctx.fillRect(s * CELL + 1, y + 1, CELL - 2, STRIP_ROW - 2);
  }

  // Red adds to (restores) the answer's side, blue takes away; |value| / scale is the strength.
  function signedColour(v, scale) {
    const t = scale > 0 ? Math.min(1, Math.abs(v) / scale) : 0, fade = Math.round(255 * (1 - t));
    return v >= 0 ? `rgb(255,${fade},${fade})` : `rgb(${fade},${fade},255)`;
  }

  // Activation patching's stream sweep on CANVAS: a row per layer, a column per symbol of
  // LABELS, each square STREAMS[l][t] (the share restored) on the signed scale; the symbols
  // above, the layer names to the left. Returns the grid's offset, for reading a hover.
  function drawPatchingStreams(canvas, labels, streams) {
    const left = 56, top = 22, T = labels.length, L = streams.length;  // room for the layer names and the symbols
    const ctx = sizeCanvas(canvas, left + T * CELL, top + L * STRIP_ROW);
    ctx.font = '13px sans-serif';
    ctx.fillStyle = '#1a1a1a';
    ctx.textAlign = 'center';
    for (let t = 0; t < T; t++) ctx.fillText(labels[t], left + (t + 0.5) * CELL, 15);
    ctx.textAlign = 'right';
    for (let l = 0; l < L; l++) ctx.fillText(t('layerOption', l), left - 6, top + (l + 0.7) * STRIP_ROW);
    for (let l = 0; l < L; l++)
      for (let t = 0; t < T; t++) {
        ctx.fillStyle = signedColour(streams[l][t], 1);
        ctx.fillRect(left + t * CELL + 1, top + l * STRIP_ROW + 1, CELL - 2, STRIP_ROW - 2);
      }
    return { left, top };
  }

  // The patching heatmap's colour scale, -1 blue through 0 white to +1 red, in words, and
  // what a negative share means.
  function patchingLegend(id) {
    const stop = (v, key) => el('span', { class: 'legend-stop' },
      el('span', { class: 'swatch', style: `background:${signedColour(v, 1)};border:1px solid #ccc` }), t(key));
    return el('div', { class: 'patching-legend', id },
      el('p', { class: 'legend-scale' }, stop(-1, 'legendLow'), stop(0, 'legendZero'), stop(1, 'legendHigh')),
      el('p', { class: 'hint legend-negative', text: t('negativeShare') }));
  }

  const SVG = 'http://www.w3.org/2000/svg';
  function svgEl(tag, attrs, text) {
    const e = document.createElementNS(SVG, tag);
    for (const [k, v] of Object.entries(attrs || {})) e.setAttribute(k, v);
    if (text !== undefined) e.textContent = text;
    return e;
  }
  // The least and greatest of VALUES, by a loop: Math.min(...values) passes every value as
  // an argument and overflows the call stack past about 100,000 of them.
  function extent(values) {
    let lo = Infinity, hi = -Infinity;
    for (const v of values) {
      if (v < lo) lo = v;
      if (v > hi) hi = v;
    }
    return [lo, hi];
  }
  const finitePoint = (p) => Array.isArray(p) && Number.isFinite(p[0]) && Number.isFinite(p[1]);

  // series: [{name, colour, points: [[x, y], ...], dash}]. The step axis is logarithmic when
  // the steps span more than two decades (early training is where the curves move). A
  // point that is not two finite numbers is not drawn (mini-gpt embeds none; a page
  // edited by hand may).
  function chart(title, series, yLabel, fixedRange) {
    const W = 400, Hh = 220, m = { l: 44, r: 8, t: 20, b: 30 };
    series = series.map((s) => ({ ...s, points: (s.points || []).filter(finitePoint) }));
    const all = series.flatMap((s) => s.points);
    const svg = svgEl('svg', { width: W, height: Hh + 18 * Math.ceil(series.length / 3), role: 'img', 'aria-label': title });
    svg.append(svgEl('text', { x: m.l, y: 13, 'font-size': 12, 'font-weight': 'bold' }, `${title} (${yLabel})`));
    if (!all.length) {
      svg.append(svgEl('text', { x: m.l, y: 60, 'font-size': 12 }, t('noData')));
      return svg;
    }
    const xs = all.map((p) => p[0]), ys = all.map((p) => p[1]);
    const [x0, x1] = extent(xs);
    const log = x0 > 0 && x1 / x0 > 100;
    const fx = log ? Math.log10 : (x) => x;
    const [y0, y1] = fixedRange || extent(ys);
    // Where V lies between LO and HI, 0 to 1 (clamped), in halves: hi - lo overflows to
    // Infinity for values near +-1e308 and would put NaN into the attributes.
    const share = (v, lo, hi) => Math.min(1, Math.max(0, (v / 2 - lo / 2) / (hi / 2 - lo / 2 || 1)));
    const between = (lo, hi, t) => lo * (1 - t) + hi * t;  // never overflows either
    const sx = (x) => m.l + share(fx(x), fx(x0), fx(x1)) * (W - m.l - m.r);
    const sy = (y) => Hh - m.b - share(y, y0, y1) * (Hh - m.t - m.b);
    svg.append(svgEl('rect', { x: m.l, y: m.t, width: W - m.l - m.r, height: Hh - m.t - m.b, fill: 'none', stroke: '#ccc' }));
    for (let k = 0; k <= 4; k++) {
      const y = between(y0, y1, k / 4);
      svg.append(svgEl('text', { x: m.l - 4, y: sy(y) + 4, 'font-size': 10, 'text-anchor': 'end' }, Number(y.toPrecision(3)).toString().slice(0, 6)));
    }
    const xTicks = log ? Array.from({ length: Math.floor(Math.log10(x1)) + 1 }, (_, k) => 10 ** k).filter((x) => x >= x0)
      : [0, 1, 2, 3, 4].map((k) => Math.round(between(x0, x1, k / 4)));
    for (const x of xTicks) svg.append(svgEl('text', { x: sx(x), y: Hh - m.b + 14, 'font-size': 10, 'text-anchor': 'middle' }, String(x)));
    svg.append(svgEl('text', { x: W - m.r, y: Hh - 2, 'font-size': 10, 'text-anchor': 'end' }, log ? t('stepLog') : t('step')));
    series.forEach((s, k) => {
      if (s.points.length) {
        svg.append(svgEl('polyline', { fill: 'none', stroke: s.colour, 'stroke-width': 1.5, 'stroke-dasharray': s.dash || '',
          points: s.points.map((p) => `${sx(p[0]).toFixed(1)},${sy(p[1]).toFixed(1)}`).join(' ') }));
      }
      const lx = m.l + (k % 3) * 120, ly = Hh + 4 + 18 * Math.floor(k / 3);
      svg.append(svgEl('rect', { x: lx, y: ly, width: 10, height: 10, fill: s.colour }));
      svg.append(svgEl('text', { x: lx + 14, y: ly + 9, 'font-size': 10 }, s.name));
    });
    return svg;
  }

  // The per-evaluation head role scores: head_roles is [{layer, head, score: number,
  // score_by_kind: {kind: number}}] (report/run_curves.cpp keeps only these shapes);
  // an entry that is not an object, and a value that is not a finite number, is skipped.
  function roleSeries(evals) {
    const byScore = new Map();  // score name -> head key -> [[step, value]]
    for (const e of evals) {
      if (!e || !Array.isArray(e.head_roles)) continue;
      for (const x of e.head_roles) {
        if (!x || typeof x !== 'object' || !Number.isInteger(x.layer) || !Number.isInteger(x.head)) continue;
        const key = `L${x.layer}.H${x.head}`;  // the head's one name
        const add = (name, value) => {
          if (!Number.isFinite(value)) return;
          if (!byScore.has(name)) byScore.set(name, new Map());
          const heads = byScore.get(name);
          if (!heads.has(key)) heads.set(key, []);
          heads.get(key).push([e.step, value]);
        };
        for (const [name, value] of Object.entries(x)) {
          if (name === 'layer' || name === 'head' || name === 'best_offset') continue;
          if (typeof value === 'number') add(name, value);
          else if (value && typeof value === 'object')  // per question kind: answer_finding_by_kind.what
            for (const [kind, v] of Object.entries(value)) add(`${name}.${kind}`, v);
        }
      }
    }
    return byScore;
  }

  // The run's charts (report/run_curves.h's JSON: the loss, the validation loss with FLOOR
  // when known, probe accuracy per kind, each head's role scores per evaluation) as elements.
  function runCharts(run, floor) {
    const box = [];
    const train = run.train || {};
    const trainSteps = Array.isArray(train.step) ? train.step : [], trainLoss = Array.isArray(train.loss) ? train.loss : [];
    const evals = (Array.isArray(run.evals) ? run.evals : []).filter((e) => e && typeof e === 'object');
    const byKind = (e) => (e.by_kind && typeof e.by_kind === 'object' ? e.by_kind : {});
    const loss = trainSteps.map((s, i) => [s, trainLoss[i]]);
    const val = evals.map((e) => [e.step, e.val_loss]);
    box.push(el('div', { class: 'chart' }, chart(t('loss'), [
      { name: run.loss_bucket > 1 ? t('trainMean', run.loss_bucket) : t('train'), colour: '#9ca3af', points: loss },
      { name: t('validation'), colour: '#1f77b4', points: val }].concat(Number.isFinite(floor) && val.length
      ? [{ name: t('floor', floor.toFixed(4)), colour: '#2ca02c', dash: '4 2', points: [[val[0][0], floor], [val[val.length - 1][0], floor]] }]
      : []), t('natsPerSymbol'))));
    const kinds = new Set();
    evals.forEach((e) => Object.keys(byKind(e)).forEach((k) => kinds.add(k)));
    const acc = [{ name: t('all'), colour: '#111', points: evals.map((e) => [e.step, e.probe_accuracy]) }];
    [...kinds].forEach((k, i) => acc.push({ name: mgWords.kind(k), colour: PALETTE[(i + 1) % PALETTE.length], dash: '4 2',
      points: evals.map((e) => [e.step, byKind(e)[k]]) }));
    box.push(el('div', { class: 'chart' }, chart(t('probeAccuracy'), acc, t('shareRight'), [0, 1])));
    const roles = roleSeries(evals);
    const rolesBox = el('div', { class: 'chart', id: 'run-roles' });
    if (!roles.size) {
      rolesBox.append(el('p', { text: t('noHeadRoles') }));
    } else {
      const select = el('select', { id: 'run-role-select' });
      // A per-kind score (answer_finding_by_kind.who) with its kind's question.
      const scoreName = (name) => name.replace(/\.([a-z_]+)$/, (m, k) => '.' + mgWords.kind(k));
      for (const name of roles.keys()) select.append(el('option', { value: name, text: scoreName(name) }));
      const holder = el('div');
      const draw = () => {
        const heads = roles.get(select.value);
        holder.replaceChildren(chart(t('headRoleScore', scoreName(select.value)), [...heads.entries()].map(([key, points], k) => ({
          name: key, colour: PALETTE[k % PALETTE.length], dash: k >= PALETTE.length ? '4 2' : '', points })), t('score')));
      };
      select.addEventListener('change', draw);
      rolesBox.append(el('label', {}, t('scoreLabel'), select), holder);
      draw();
    }
    box.push(rolesBox);
    const total = run.evals_total || evals.length;
    box.push(el('p', { class: 'hint', text: t('runHint', run.dir, run.lines, total, run.eval_stride, run.skipped) }));
    return box;
  }

  // SELECT's options, one per kind of KINDS ([{kind}], a chain's or a circuit's), in the
  // page's language, the one chosen kept (a language switch fills them again).
  function fillKinds(select, kinds) {
    const chosen = select.value;
    select.replaceChildren(...kinds.map((k) => el('option', { value: k.kind, text: mgWords.kind(k.kind) })));
    if (chosen) select.value = chosen;
  }

  // inspect-heads --circuit's circuit of one kind as a graph (the explorer and the live page):
  // the embeddings on the left, a column per layer for its heads and one for its MLP, the
  // logits on the right; each kept edge from its sender to its receiver, entering a head
  // above its centre for q, at it for k and below it for v; colour by the input (q blue, k
  // green, v red, an MLP grey, the logits black), width by the edge's own effect (the drop
  // of faithfulness without it). CIRCUIT: the JSON of --circuit --format json; KIND: its kind.
  function edgeCircuitGraph(circuit, kind, onHead) {
    const k = circuit.kinds.find((x) => x.kind === kind) || circuit.kinds[0];
    const senders = circuit.graph.senders, receivers = circuit.graph.receivers;
    const L = Math.max(...senders.map((s) => s.layer)) + 1, H = Math.max(...senders.map((s) => s.head)) + 1;
    const gapX = 70, gapY = 40, W = 80 + gapX * (2 * L + 1), Hh = 40 + gapY * (H + 1);
    const middle = 24 + (gapY * H) / 2;
    const place = (layer, head) => (layer < 0 ? (head === -2 ? [W - 40, middle] : [30, middle])
      : head >= 0 ? [30 + gapX * (1 + 2 * layer), 24 + gapY * head] : [30 + gapX * (2 + 2 * layer), 24 + gapY * H]);
    const COLOUR = { q: '#1f77b4', k: '#2ca02c', v: '#d62728', mlp: '#7f7f7f', logits: '#000000' };
    const PORT = { q: -6, k: 0, v: 6, mlp: 0, logits: 0 };
    const svg = svgEl('svg', { class: 'edge-circuit', width: W, height: Hh, role: 'img', 'aria-label': t('edgeCircuitLabel', mgWords.kind(k.kind)) });
    const kept = k.edges.filter((e) => e.kept);
    const scale = Math.max(1e-9, ...kept.map((e) => Math.abs(e.own)));
    const sender = new Map(senders.map((s) => [s.name, s])), receiver = new Map(receivers.map((r) => [r.name, r]));
    for (const e of kept) {
      const s = sender.get(e.sender), r = receiver.get(e.receiver);
      const [x1, y1] = place(s.layer, s.head);
      const [x2, y0] = r.input === 'logits' ? place(-1, -2) : place(r.layer, r.head);
      const y2 = y0 + PORT[r.input];
      const bend = x2 - x1 > gapX * 1.5 ? (y1 <= y2 ? -18 : 18) : 0;
      const path = svgEl('path', { class: 'circuit-edge', d: `M${x1 + 10},${y1} Q${(x1 + x2) / 2},${(y1 + y2) / 2 + bend} ${x2 - 10},${y2}`,
        fill: 'none', stroke: COLOUR[r.input], 'stroke-opacity': 0.75, 'stroke-width': 0.8 + (7 * Math.abs(e.own)) / scale,
        'data-sender': e.sender, 'data-receiver': e.receiver, 'data-own': e.own });
      path.append(svgEl('title', {}, t('edgeCircuitEdge', e.sender, e.receiver, signed(e.own, 3), signed(e.exact, 3), signed(e.eap, 3))));
      svg.append(path);
    }
    const node = (name, x, y, colour, head) => {
      const g = svgEl('g', { class: 'circuit-node', 'data-name': name });
      g.append(svgEl('rect', { x: x - 22, y: y - 10, width: 44, height: 20, rx: 5, fill: '#fff', stroke: colour, 'stroke-width': 1.5 }),
        svgEl('text', { x, y: y + 4, 'text-anchor': 'middle', 'font-size': 10 }, name));
      if (head && onHead) g.addEventListener('click', () => onHead(head[0], head[1]));
      svg.append(g);
    };
    node('embed', ...place(-1, -1), '#555');
    node('logits', ...place(-1, -2), '#000');
    for (const s of senders)
      if (s.layer >= 0) node(s.name, ...place(s.layer, s.head), s.head >= 0 ? headColour(s.head) : '#7f7f7f', s.head >= 0 ? [s.layer, s.head] : null);
    const note = t('edgeCircuitNote', mgWords.kind(k.kind), k.kept, circuit.graph.edges, circuit.threshold, fixed(k.faithfulness, 3),
      fixed(k.incompleteness, 3), fixed(k.eap_spearman, 2), fixed(k.eap_kendall, 2)) + t('edgeCircuitLegend');
    return { svg, note };
  }

  // ---- the step slider: serve --run's live page and the explorer's --replay ----------------
  // A range input over a run's kept evaluations (#step-slider), its formation events marked
  // under it (#event-marks), listed (#event-summary, #event-list), and the curves under it
  // (#step-curves, #step-legend), all on one x scale: evaluation i sits at the same x on the
  // three. REPLAY: {steps: [step of each kept evaluation], events: inspect-heads --timeline's
  // events, evals: run_curves' evaluations (step, val_loss, by_kind)}; SHOWN: the index drawn.
  const THUMB = 8;  // half a range thumb's width in Chromium, CSS pixels: where value 0 sits
  const EVENT_COLOURS = { accuracy: '#2ca02c', role_jump: '#9467bd', loss_bump: '#d62728', loss_plateau: '#ff7f0e',
    schedule: '#111' };
  // The x of evaluation I of N on the slider, its marks and its curves alike.
  function replayX(i, n, width) {
    return n <= 1 ? width / 2 : THUMB + (i * (width - 2 * THUMB)) / (n - 1);
  }
  // The kept evaluation an event is shown at: the first at or after its step, else the last.
  function eventIndex(steps, step) {
    const i = steps.findIndex((s) => s >= step);
    return i < 0 ? steps.length - 1 : i;
  }
  const trackWidth = () => document.getElementById('step-slider').getBoundingClientRect().width || 600;

  // The marks, the event list and the curves; a click on a mark or an event's button calls
  // CHOOSE with the index of the evaluation it is shown at.
  function drawReplay(replay, shown, choose) {
    const $ = (id) => document.getElementById(id);
    const n = replay.steps.length, width = trackWidth();
    const marks = replay.events.map((e, k) => {
      const i = eventIndex(replay.steps, e.step);
      return el('div', { class: 'mark', id: `event-mark-${k}`, 'data-step': e.step, 'data-type': e.type,
        'data-index': i, title: `${t('step')} ${e.step}: ${mgWords.eventHeadline(e)}`,
        style: `left:${replayX(i, n, width).toFixed(1)}px;background:${EVENT_COLOURS[e.type] || '#555'}` });
    });
    marks.forEach((m) => m.addEventListener('click', () => choose(Number(m.dataset.index))));
    $('event-marks').replaceChildren(...marks);
    $('event-summary').textContent = t('replayEvents', replay.events.length);
    $('step-legend').textContent = t('replayLegend');
    $('event-list').replaceChildren(...replay.events.map((e, k) => {
      const go = el('button', { type: 'button', text: t('replayGo') });
      go.addEventListener('click', () => choose(eventIndex(replay.steps, e.step)));
      const heads = (e.heads || []).map((h) => `${h.head} ${h.score} ${fixed(h.before, 2)}→${fixed(h.after, 2)}`).join(', ');
      return el('li', { id: `event-${k}`, 'data-step': e.step, 'data-type': e.type }, go,
        ` ${t('step')} ${e.step} · ${mgWords.eventHeadline(e)}` + (heads ? ` · ${t('replayChanged')}: ${heads}` : ''));
    }));
    drawStepCurves(replay, shown);
  }

  // Under the slider: the validation loss (scaled to its range) and each kind's accuracy
  // (0 to 1) at every kept evaluation, and the evaluation SHOWN.
  function drawStepCurves(replay, shown) {
    const n = replay.steps.length, width = trackWidth(), height = 70;
    const ctx = sizeCanvas(document.getElementById('step-curves'), width, height);
    const byStep = new Map(replay.evals.map((e) => [e.step, e]));
    const at = replay.steps.map((s) => byStep.get(s) || null);
    const [lo, hi] = extent(at.filter((e) => e).map((e) => e.val_loss));
    const line = (value, colour, dash) => {
      ctx.strokeStyle = colour;
      ctx.setLineDash(dash ? [4, 2] : []);
      ctx.beginPath();
      let started = false;
      at.forEach((e, i) => {
        const v = e ? value(e) : null;
        if (v === null || v === undefined || !Number.isFinite(v)) return;
        const x = replayX(i, n, width), y = 4 + (height - 8) * (1 - v);
        if (started) ctx.lineTo(x, y); else ctx.moveTo(x, y);
        started = true;
      });
      ctx.stroke();
    };
    if (Number.isFinite(lo)) line((e) => (hi > lo ? (e.val_loss - lo) / (hi - lo) : 0.5), '#1f77b4', false);
    const kinds = new Set();
    at.forEach((e) => e && Object.keys(e.by_kind || {}).forEach((k) => kinds.add(k)));
    [...kinds].forEach((k, i) => line((e) => (e.by_kind || {})[k], headColour(i + 1), true));
    ctx.setLineDash([]);
    ctx.strokeStyle = '#999';
    ctx.beginPath();
    ctx.moveTo(replayX(shown, n, width), 0);
    ctx.lineTo(replayX(shown, n, width), height);
    ctx.stroke();
  }

  return { CELL, STRIP_ROW, PALETTE, drawReplay, drawStepCurves, eventIndex, drawStripRow, fixed, signed, headColour, symbolLabel, el, sizeCanvas, blues, heatmapImage,
    labelledHeatmap, signedColour, svgEl, extent, chart, roleSeries, runCharts, drawPatchingStreams, patchingLegend, fillKinds, edgeCircuitGraph };
}());
