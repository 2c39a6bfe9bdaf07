// The head explorer's script. It reads the JSON that src/report/explorer.cpp embedded in
// #explorer-data and draws it: no model arithmetic happens here, only look-ups. Large
// matrices go to canvases (never one DOM node per cell), the grid's thumbnails are drawn
// a few per frame after the page is ready, and a head's weights are decoded on first use.
// When the first view is on screen, document.body.dataset.ready = "1" and readyMs holds the
// time since navigation start (performance mark "explorer-ready"). Every word comes from
// mgWords (src/report/page/words.js); the language switch redraws the page in place.
'use strict';

(function () {
  performance.mark('explorer-script');
  const data = JSON.parse(document.getElementById('explorer-data').textContent);
  performance.mark('explorer-parsed');
  const L = data.model.n_layer, H = data.model.n_head, T = data.tokens.length;
  const { CELL, STRIP_ROW, drawStripRow, fixed, signed, headColour, el, sizeCanvas, heatmapImage, labelledHeatmap, signedColour,
    svgEl, runCharts, drawPatchingStreams, patchingLegend, symbolLabel, fillKinds, edgeCircuitGraph } = mgDraw;
  const { t: words, kind, role, headName } = mgWords;
  const $ = (id) => document.getElementById(id);
  // step: the index of the kept evaluation the slider shows (--replay), or null for the page's own model.
  const state = { layer: 0, query: T - 1, pinned: T - 1, head: { layer: 0, head: 0 }, tracePosition: T - 1, step: null };
  const replay = data.replay;  // null without --replay (report/explorer_replay.h)

  // ---- numbers -------------------------------------------------------------------------
  const headIndex = (l, h) => l * H + h;

  function decodeBytes(b64) {
    const bin = atob(b64);
    const bytes = new Uint8Array(bin.length);
    for (let i = 0; i < bin.length; i++) bytes[i] = bin.charCodeAt(i);
    return bytes;
  }
  // float32 little-endian (the trace's keys and values).
  function decodeFloats(b64) {
    const bytes = decodeBytes(b64), view = new DataView(bytes.buffer);
    const out = new Float32Array(bytes.length / 4);
    for (let i = 0; i < out.length; i++) out[i] = view.getFloat32(4 * i, true);
    return out;
  }
  // Signed bytes times max / 127 (the circuit tables, for drawing).
  function decodeInt8(table) {
    const bytes = new Int8Array(decodeBytes(table.int8).buffer);
    return Float64Array.from(bytes, (b) => (b * table.max) / 127);
  }

  // What the page shows of the model at the slider's step (or its own model): the heads'
  // weights and summaries, their roles, the next symbol and the attribution at a position, the chain.
  const stepNow = () => (state.step === null ? null : replay.steps[state.step]);
  const headsNow = (step = state.step) => (step === null ? data.heads : replay.steps[step].heads);
  // Weights: 24-bit steps of 1 / weight_steps, row t holding keys 0..t (report/explorer.h).
  const weightCache = new Map();  // "step/head index" -> Float64Array, the lower triangle
  function weightsOf(l, h, step = state.step) {
    const i = headIndex(l, h), key = `${step}/${i}`;
    if (!weightCache.has(key)) {
      const bytes = decodeBytes(headsNow(step)[i].weights), out = new Float64Array(bytes.length / 3);
      for (let k = 0, b = 0; k < out.length; k++, b += 3) out[k] = (bytes[b] | (bytes[b + 1] << 8) | (bytes[b + 2] << 16)) / data.weight_steps;
      weightCache.set(key, out);
    }
    return weightCache.get(key);
  }
  // w[t][s]: the weight query t gives key s (exactly 0 for s > t).
  function weight(l, h, t, s) {
    return s > t ? 0 : weightsOf(l, h)[(t * (t + 1)) / 2 + s];
  }
  const label = (s) => data.labels[s];

  // ---- header ----------------------------------------------------------------------------
  function drawHeader() {
    const m = data.model;
    $('model-line').textContent = words('modelLine', m, words('positionType', m.position)) + ` · ${data.source} · ` +
      words('textOf', T) + (data.loss !== null ? ' · ' + words('lossOnText', fixed(data.loss, 4)) : '');
    const r = data.roles, texts = mgWords.rolesTexts(r.texts_source, r.text_count, r.texts_probe, r.texts);
    $('probe-line').textContent = r.probe
      ? words('probeLine', r.probe, fixed(r.probe_accuracy, 3), r.ablation === 'mean', texts)
      : words('noProbeLine', texts);
  }

  // ---- the text row and the strips --------------------------------------------------------
  function buildSymbols() {
    const row = $('symbols');
    for (let s = 0; s < T; s++) {
      const b = el('button', { type: 'button', 'data-pos': s, id: 'sym-' + s, tabindex: '-1', text: label(s) });
      b.addEventListener('mouseenter', () => setQuery(s, false));
      b.addEventListener('focus', () => setQuery(s, false));
      b.addEventListener('click', () => setQuery(s, true));
      row.append(b);
    }
    row.addEventListener('mouseleave', () => setQuery(state.pinned, false));
    row.addEventListener('keydown', (e) => {
      const moves = { ArrowLeft: -1, ArrowRight: 1, Home: -T, End: T };
      if (e.key in moves) {
        e.preventDefault();
        const s = Math.min(T - 1, Math.max(0, state.query + moves[e.key]));
        $('sym-' + s).focus();
      } else if (e.key === 'Enter' || e.key === ' ') {
        e.preventDefault();
        setQuery(state.query, true);
      }
    });
    $('sym-' + (T - 1)).tabIndex = 0;
    labelSymbols();
    const strips = $('strips');
    strips.addEventListener('mousemove', (e) => {
      const r = strips.getBoundingClientRect();
      const s = Math.floor((e.clientX - r.left) / CELL), h = Math.floor((e.clientY - r.top) / STRIP_ROW);
      if (s < 0 || s >= T || h < 0 || h >= H) return;
      const t = state.query;
      $('strip-hover').textContent = s > t
        ? words('masked', s, label(s), t)
        : words('queryToKey', t, label(t), s, label(s)) + ': ' +
          Array.from({ length: H }, (_, hh) => `${headName(state.layer, hh)} ${fixed(weight(state.layer, hh, t, s), 7)}`).join(' · ');
    });
  }
  function labelSymbols() {
    for (let s = 0; s < T; s++) $('sym-' + s).title = words('positionTitle', s, label(s));
  }

  function drawStrips() {
    const labels = $('strip-labels');
    labels.replaceChildren();
    for (let h = 0; h < H; h++) {
      labels.append(el('div', {}, el('span', { class: 'swatch', style: `background:${headColour(h)}` }),
        headName(state.layer, h)));
    }
    const ctx = sizeCanvas($('strips'), T * CELL, H * STRIP_ROW);
    const t = state.query;
    for (let h = 0; h < H; h++) drawStripRow(ctx, h * STRIP_ROW, headColour(h), (s) => weight(state.layer, h, t, s), t, T);
    ctx.strokeStyle = '#d97706';
    ctx.lineWidth = 2;
    ctx.strokeRect(t * CELL + 1, 1, CELL - 2, H * STRIP_ROW - 2);
  }

  function drawReadout() {
    const t = state.query, l = state.layer;
    const table = el('table', { id: 'readout-table', 'data-layer': l, 'data-query': t });
    for (let h = 0; h < H; h++) {
      const row = Array.from({ length: t + 1 }, (_, s) => weight(l, h, t, s));
      const order = row.map((w, s) => s).sort((a, b) => row[b] - row[a] || a - b).slice(0, 3);
      const details = el('details', {}, el('summary', { text: words('allWeights', t + 1) }),
        el('div', { class: 'row-values', text: row.map((w, s) => `${s} ${label(s)} ${fixed(w, 7)}`).join(' · ') }));
      table.append(el('tr', { id: `readout-${l}-${h}`, class: 'readout-head', 'data-layer': l, 'data-head': h,
        'data-query': t, 'data-weights': row.map((w) => fixed(w, 7)).join(' ') },
      el('td', {}, el('span', { class: 'swatch', style: `background:${headColour(h)}` }), headName(l, h)),
      el('td', { text: order.map((s) => `${label(s)} (${s}) ${fixed(row[s], 7)}`).join('  ') }),
      el('td', {}, details)));
    }
    $('readout').replaceChildren(el('p', { class: 'hint', text: words('readoutHint', t, label(t), t === state.pinned, l) }), table);
  }

  function setQuery(t, pin) {
    if (pin) state.pinned = t;
    const old = $('sym-' + state.query);
    old.classList.remove('query');
    old.tabIndex = -1;
    state.query = t;
    const b = $('sym-' + t);
    b.classList.add('query');
    b.tabIndex = 0;
    document.querySelectorAll('#symbols .pinned').forEach((x) => x.classList.remove('pinned'));
    $('sym-' + state.pinned).classList.add('pinned');
    drawStrips();
    drawReadout();
    drawAttribution();
    drawNext();
    if (pin && tracedAt(t)) setTracePosition(t);
  }

  function buildLayerSelect() {
    const select = $('layer-select');
    for (let l = 0; l < L; l++) select.append(el('option', { value: l, text: words('layerOption', l) }));
    select.addEventListener('change', () => {
      state.layer = Number(select.value);
      drawStrips();
      drawReadout();
    });
  }
  function labelLayerSelect() {
    [...$('layer-select').options].forEach((o, l) => { o.textContent = words('layerOption', l); });
  }

  // ---- the grid of heads -------------------------------------------------------------------
  // At a kept evaluation the pattern scores alone: the probe drop is measured for the page's model only.
  const roleOf = (l, h) => (stepNow() ? stepNow().roles[headIndex(l, h)] : data.roles.heads[headIndex(l, h)].roles);
  const dropText = (r) => (stepNow() ? words('replayNoDrop') : r.accuracy_drop === null ? words('noProbeDrop')
    : words('probeDrop', signed(r.accuracy_drop, 3)));

  // The grid is built once; labelGrid writes its words (again after a language switch).
  // A thumbnail has 84 / T pixels per symbol, too few for a label: hovering one names the
  // query and key symbols under the pointer in the line below the grid.
  const thumbs = [];
  function buildGrid() {
    const grid = $('grid');
    const size = H <= 4 ? 84 : 56;
    grid.style.gridTemplateColumns = `max-content repeat(${H}, ${H <= 4 ? 'max-content' : size + 8 + 'px'})`;
    for (let l = 0; l < L; l++) {
      grid.append(el('div', { class: 'layer-label', id: `layer-label-${l}` }));
      for (let h = 0; h < H; h++) {
        const canvas = el('canvas', { width: T, height: T, style: `width:${size}px;height:${size}px`, id: `thumb-${l}-${h}` });
        // Few heads: the scores beside the heatmap; many: the role and cost under it.
        const text = el('span', { class: 'cell-text' }, el('span', { class: 'role' }), el('span', { class: 'scores drop' }));
        if (H <= 4) text.append(el('span', { class: 'scores s1' }), el('span', { class: 'scores s2' }), el('span', { class: 'scores s3' }));
        const cell = el('button', { type: 'button', class: H <= 4 ? 'head-cell wide' : 'head-cell', id: `cell-${l}-${h}`,
          'data-layer': l, 'data-head': h }, canvas, text);
        cell.addEventListener('click', () => chooseHead(l, h));
        canvas.addEventListener('mousemove', (e) => {
          const r = canvas.getBoundingClientRect();
          const q = Math.floor(((e.clientY - r.top) / r.height) * T), k = Math.floor(((e.clientX - r.left) / r.width) * T);
          if (q < 0 || q >= T || k < 0 || k >= T) return;
          $('grid-hover').textContent = k > q ? words('thumbMasked', headName(l, h), q, label(q), k, label(k))
            : words('thumbHover', headName(l, h), q, label(q), k, label(k), fixed(weight(l, h, q, k), 4));
        });
        grid.append(cell);
        thumbs.push({ canvas, l, h });
      }
    }
    labelGrid();
  }
  function labelGrid() {
    for (let l = 0; l < L; l++) {
      $(`layer-label-${l}`).textContent = words('layerOption', l);
      for (let h = 0; h < H; h++) {
        const r = roleOf(l, h), cell = $(`cell-${l}-${h}`);
        cell.querySelector('.role').textContent = `${headName(l, h)} ${role(r.role)}`;
        const drop = cell.querySelector('.drop');
        drop.textContent = dropText(r);
        drop.title = words('probeDropTitle');
        if (H <= 4) {
          cell.querySelector('.s1').textContent = words('cardScores1', fixed(r.previous_token, 2), fixed(r.current_token, 2));
          cell.querySelector('.s2').textContent = words('cardScores2', fixed(r.first_position, 2), fixed(r.induction, 2));
          cell.querySelector('.s3').textContent = words('cardScores3', fixed(r.answer_finding, 2), fixed(r.copy_forward, 2));
        }
        cell.title = words('cardTitle', headName(l, h), role(r.role));
        // The numbers drawn, for a test to read: the role and the scores behind it.
        Object.assign(cell.dataset, { role: r.role, previousToken: r.previous_token, induction: r.induction,
          answerFinding: r.answer_finding });
      }
    }
  }
  // A few thumbnails per frame, so a big model never freezes the page.
  function drawThumbsLazily() {
    let next = 0;
    function frame() {
      const end = Math.min(thumbs.length, next + 4);
      for (; next < end; next++) {
        const { canvas, l, h } = thumbs[next];
        const ctx = canvas.getContext('2d');
        ctx.putImageData(heatmapImage(ctx, T, weightsOf(l, h)), 0, 0);
      }
      if (next < thumbs.length) requestAnimationFrame(frame);
      else document.body.dataset.gridDrawn = '1';
    }
    requestAnimationFrame(frame);
  }

  // ---- the chosen head ---------------------------------------------------------------------
  function chooseHead(l, h) {
    document.querySelectorAll('.head-cell.chosen').forEach((c) => c.classList.remove('chosen'));
    $(`cell-${l}-${h}`).classList.add('chosen');
    state.head = { layer: l, head: h };
    if (state.layer !== l) {
      state.layer = l;
      $('layer-select').value = String(l);
      drawStrips();
      drawReadout();
    }
    $('detail-title').textContent = words('headTitleOf', headName(l, h), role(roleOf(l, h).role));
    drawDetailHeatmap();
    drawDetailInfo();
    drawTrace();
    drawCircuits();
  }

  // The chosen head's weights with the symbols on its rows (queries) and columns (keys):
  // 14 px a cell at T = 36, smaller for a longer text (a label on every k-th then).
  let detailGeometry = { left: 0, top: 0, cell: 1 };
  function drawDetailHeatmap() {
    const { layer: l, head: h } = state.head;
    const cell = Math.max(2, Math.min(16, Math.floor(500 / T)));
    detailGeometry = labelledHeatmap($('detail-canvas'), data.labels, weightsOf(l, h), cell);
  }
  function detailCellAt(e) {
    const r = $('detail-canvas').getBoundingClientRect(), g = detailGeometry;
    return { t: Math.floor((e.clientY - r.top - g.top) / g.cell), s: Math.floor((e.clientX - r.left - g.left) / g.cell) };
  }
  const cursor = { t: T - 1, s: T - 1 };  // the heatmap cell the keyboard points at
  function showDetailCell(t, s) {
    const { layer: l, head: h } = state.head;
    $('detail-hover').textContent = s > t ? words('detailMasked', t, label(t), s, label(s))
      : words('detailCell', headName(l, h), t, label(t), s, label(s), fixed(weight(l, h, t, s), 7));
  }
  function buildDetailEvents() {
    const canvas = $('detail-canvas');
    canvas.addEventListener('mousemove', (e) => {
      const { t, s } = detailCellAt(e);
      if (t >= 0 && t < T && s >= 0 && s < T) showDetailCell(t, s);
    });
    // Arrow keys walk the cells (row: query, column: key); Enter makes the row the query.
    canvas.addEventListener('keydown', (e) => {
      const moves = { ArrowUp: [-1, 0], ArrowDown: [1, 0], ArrowLeft: [0, -1], ArrowRight: [0, 1] };
      if (e.key in moves) {
        e.preventDefault();
        cursor.t = Math.min(T - 1, Math.max(0, cursor.t + moves[e.key][0]));
        cursor.s = Math.min(T - 1, Math.max(0, cursor.s + moves[e.key][1]));
        showDetailCell(cursor.t, cursor.s);
      } else if (e.key === 'Enter') {
        e.preventDefault();
        setQuery(cursor.t, true);
      }
    });
    canvas.addEventListener('focus', () => showDetailCell(cursor.t, cursor.s));
    canvas.addEventListener('click', (e) => {
      const { t } = detailCellAt(e);
      if (t >= 0 && t < T) setQuery(t, true);
    });
  }

  function drawDetailInfo() {
    const { layer: l, head: h } = state.head;
    const r = roleOf(l, h), s = headsNow()[headIndex(l, h)].summary, th = data.roles.thresholds;
    const row = (name, value, threshold) => el('tr', {}, el('td', { text: name }),
      el('td', { class: threshold !== undefined && value !== null && value >= threshold ? 'role-hit' : '', text: fixed(value, 3) }),
      el('td', { class: 'hint', text: threshold !== undefined ? words('namesRoleAt', threshold) : '' }));
    const table = el('table', { id: 'detail-roles' },
      el('tr', {}, el('th', { text: words('roleScore') }), el('th', { text: words('value') }), el('th', { text: '' })),
      row(words('scorePrev'), r.previous_token, th.previous_token),
      row(words('scoreOffset', r.best_offset), r.best_offset_score, r.best_offset <= -2 ? th.offset : undefined),
      row(words('scoreCur'), r.current_token, th.current_token),
      row(words('scoreFirst'), r.first_position, th.first_position),
      row(words('scoreInduction'), r.induction, th.induction),
      row(words('scoreAnswer'), r.answer_finding, th.answer_finding),
      row(words('scoreCopy'), r.copy_forward, th.copy_forward));
    // Per question kind: a head may find (or copy) one kind's answers and not another's.
    for (const [k, value] of Object.entries(r.answer_finding_by_kind || {}))
      table.append(row(words('scoreAnswerKind', kind(k)), value, th.answer_finding));
    for (const [k, value] of Object.entries(r.copy_forward_by_kind || {}))
      table.append(row(words('scoreCopyKind', kind(k)), value, th.copy_forward));
    const byKind = Object.entries(r.accuracy_drop_by_kind || {}).map(([k, d]) => `${kind(k)} ${signed(d, 3)}`).join(', ');
    const drop = stepNow() ? words('replayNoDrop') : r.accuracy_drop === null ? words('noProbeNoDrop')
      : words('probeDropLine', fixed(data.roles.probe_accuracy, 3), fixed(data.roles.probe_accuracy - r.accuracy_drop, 3),
        signed(r.accuracy_drop, 3), data.roles.ablation, byKind);
    $('detail-info').replaceChildren(
      el('p', {}, el('strong', { text: words('roleLabel', role(r.role)) })),
      table,
      el('p', { id: 'detail-drop', text: drop }),
      el('p', { id: 'detail-loss', text: words('onThisText', fixed(s.mean_entropy, 3), s.top_offset, fixed(100 * s.top_offset_share, 0),
        fixed(s.first_share, 3), signed(s.importance, 4)) }),
      el('p', { class: 'hint', text: words('detailHint') }));
  }

  // ---- the worked trace ----------------------------------------------------------------------
  const traced = new Set(data.traces.positions);
  const tracedAt = (p) => traced.has(p);
  function buildTraceSelect() {
    const select = $('trace-position');
    for (const p of data.traces.positions) select.append(el('option', { value: p, text: `${p} ${label(p)}` }));
    select.value = String(state.tracePosition);
    select.addEventListener('change', () => {
      state.tracePosition = Number(select.value);
      drawTrace();
    });
    labelTraceNote();
  }
  function labelTraceNote() {
    $('trace-note').textContent = data.traces.all_positions ? words('tracesEvery', T)
      : words('tracesOnly', data.traces.positions.join(', '), data.traces.budget);
  }
  function setTracePosition(p) {
    state.tracePosition = p;
    $('trace-position').value = String(p);
    drawTrace();
  }
  const vector = (v, id) => el('code', { class: 'vector', id, 'data-values': v.join(' '), text: '[' + v.map((x) => fixed(x, 6)).join(', ') + ']' });

  function drawTrace() {
    const { layer: l, head: h } = state.head;
    const entry = data.traces.heads[headIndex(l, h)];
    const P = state.tracePosition, tr = entry.at[String(P)];
    const rowsOf = (b64) => {  // [T,d] float32 -> T rows
      const flat = decodeFloats(b64), d = flat.length / T;
      return Array.from({ length: T }, (_, s) => Array.from(flat.subarray(s * d, s * d + d)));
    };
    const box = $('trace');
    if (!tr) {
      box.replaceChildren(el('p', { text: words('noTraceAt', P) }));
      return;
    }
    const d = tr.d, rope = tr.position_type === 'rope';
    // The keys' and values' tables are built when opened (T rows of d numbers each).
    const vectorTable = (title, rows, idPrefix) => {
      const table = el('table', {}, el('tr', {}, el('th', { text: 's' }), el('th', { class: 'sym', text: words('keyCol') }), el('th', { class: 'sym', text: title })));
      for (let s = 0; s <= P; s++) {
        table.append(el('tr', {}, el('td', { text: s }), el('td', { class: 'sym', text: label(s) }),
          el('td', { style: 'text-align:left' }, vector(rows[s], `${idPrefix}-${s}`))));
      }
      return table;
    };
    const lazyDetails = (summary, build) => {
      const details = el('details', {}, el('summary', { text: summary }));
      details.addEventListener('toggle', () => {
        if (details.open && details.children.length === 1) details.append(build());
      });
      return details;
    };
    const keyRows = lazyDetails(words('traceKeys', P + 1), () => vectorTable(rope ? 'k_s (RoPE)' : 'k_s', rowsOf(entry.keys), 'trace-key'));
    const valueRows = lazyDetails(words('traceValues', P + 1), () => vectorTable('v_s', rowsOf(entry.values), 'trace-value'));
    const scores = el('table', { id: 'trace-scores' }, el('tr', {}, ...['s', words('keyCol'), 'q·k_s', '/√d', 'mask', 'weight', words('forwardPass')]
      .map((x, i) => el('th', { class: i === 1 ? 'sym' : '', text: x }))));
    for (let s = 0; s < T; s++) {
      const masked = s > P;
      scores.append(el('tr', { class: masked ? 'masked' : '' },
        el('td', { text: s }), el('td', { class: 'sym', text: label(s) }),
        el('td', { id: `trace-dot-${s}`, text: masked ? '' : fixed(tr.dots[s], 6) }),
        el('td', { id: `trace-score-${s}`, text: masked ? '' : fixed(tr.scores[s], 6) }),
        el('td', { text: masked ? '−∞' : '0' }),
        el('td', { id: `trace-weight-${s}`, text: fixed(masked ? 0 : tr.weights[s], 6) }),
        el('td', { text: `(${fixed(masked ? 0 : weightsOf(l, h, null)[(P * (P + 1)) / 2 + s], 6)})` })));  // the page's model, as the trace
    }
    const pushes = (list, kind) => el('span', {}, ...list.map((p, i) => el('span', { id: `trace-${kind}-${i}`, 'data-symbol': p.symbol,
      'data-logit': p.logit, text: ` “${p.symbol}” ${signed(p.logit, 6)}` })));
    box.replaceChildren(el('p', { id: 'trace-title', 'data-layer': l, 'data-head': h, 'data-position': P,
      text: words('traceTitle', headName(l, h), P, label(P), tr.D, d, h) }),
    el('ol', {},
      el('li', {}, words('traceX', P, l, tr.D), vector(tr.x, 'trace-x')),
      el('li', {}, words('traceQ', d), vector(tr.q_raw, 'trace-q-raw'),
        rope ? el('div', {}, words('traceRope', P), vector(tr.q, 'trace-q')) : el('div', { text: words('traceLearned') })),
      el('li', {}, words('traceK', P), keyRows),
      el('li', {}, words('traceScores1'), el('span', { id: 'trace-scale', text: fixed(tr.scale, 9) }),
        words('traceScores2'), String(P), words('traceScores3'), scores),
      el('li', {}, words('traceV'), valueRows, el('div', {}, words('traceOut'), vector(tr.head_output, 'trace-head-output'))),
      el('li', {}, words('traceWo', P), vector(tr.contribution, 'trace-contribution')),
      el('li', {}, words('tracePush', fixed(tr.final_sigma, 6)), pushes(tr.top_up, 'up'), el('br'), words('down'), pushes(tr.top_down, 'down'))));
  }

  // ---- circuits --------------------------------------------------------------------------------
  const circuitCache = new Map();
  function drawCircuits() {
    const box = $('circuits');
    const c = data.circuits;
    if (!c.available) {
      box.replaceChildren(el('p', { id: 'circuits-not-drawn', text: words('notDrawn', mgWords.reason(c)) }));
      return;
    }
    const { layer: l, head: h } = state.head, i = headIndex(l, h), V = c.V, entry = c.heads[i];
    if (!circuitCache.has(i)) circuitCache.set(i, { qk: decodeInt8(entry.qk), ov: decodeInt8(entry.ov) });
    const tables = circuitCache.get(i);
    const sym = (id) => c.symbols[id];
    const hover = el('p', { class: 'hover-line', id: 'circuit-hover', text: '\u00a0' });
    const panel = (name, table, top, rowName, columnName) => {
      const canvas = el('canvas', { width: V, height: V, id: `circuit-${name}` });
      const px = Math.max(2, Math.floor(300 / V));
      canvas.style.width = canvas.style.height = V * px + 'px';
      const ctx = canvas.getContext('2d');
      const image = ctx.createImageData(V, V);
      let max = 0;
      for (const v of table) max = Math.max(max, Math.abs(v));
      for (let k = 0; k < V * V; k++) {  // diverging: blue below 0, white at 0, red above
        const x = max > 0 ? table[k] / max : 0;
        const rgb = x >= 0 ? [255, Math.round(255 * (1 - x)), Math.round(255 * (1 - x))]
          : [Math.round(255 * (1 + x)), Math.round(255 * (1 + x)), 255];
        image.data.set([rgb[0], rgb[1], rgb[2], 255], 4 * k);
      }
      ctx.putImageData(image, 0, 0);
      canvas.addEventListener('mousemove', (e) => {
        const r = canvas.getBoundingClientRect();
        const a = Math.floor(((e.clientY - r.top) / r.height) * V), b = Math.floor(((e.clientX - r.left) / r.width) * V);
        if (a >= 0 && a < V && b >= 0 && b < V)
          hover.textContent = words('circuitHover', name.toUpperCase(), rowName, sym(a), columnName, sym(b), fixed(table[a * V + b], 3));
      });
      return el('div', {}, el('strong', { text: name.toUpperCase() }), words('circuitPanel', rowName, columnName, fixed(max, 3)),
        el('br'), canvas,
        el('ol', {}, ...top.map(([a, b, v]) => el('li', { text: `“${sym(a)}” → “${sym(b)}” ${fixed(v, 4)}` }))));
    };
    box.replaceChildren(
      el('p', { id: 'circuit-copy', 'data-copy-score': entry.copy_score,
        text: words('copyScore', fixed(entry.copy_score, 3), fixed(100 * entry.diagonal_top1, 1)) }),
      el('div', { class: 'circuit-pair' },
        panel('qk', tables.qk, entry.qk_top, words('querySymbol'), words('keySymbol')),
        panel('ov', tables.ov, entry.ov_top, words('attendedSymbol'), words('outputSymbol'))),
      hover,
      el('p', { class: 'hint', text: words('circuitsHint') }));
  }

  // ---- the run's curves (inline SVG) -----------------------------------------------------------
  function drawRun() {
    if (!data.run) return;
    $('run-section').hidden = false;
    $('run').replaceChildren(...runCharts(data.run));
  }

  // ---- the circuit: attribution bars, the patching heatmap, the composition graph ------------
  const circuit = data.circuit;

  // Each part of the final stream at the query (or the last position, where the query has
  // none) and its share of the logit difference, as a bar.
  // The attribution at position P, of the page's model or of the slider's step (its parts
  // named once, replay.parts); none where P has none precomputed.
  function attributionAt(P) {
    const step = stepNow();
    if (!step) return circuit.attribution.at[String(P)];
    const k = replay.positions.indexOf(P);
    if (k < 0) return undefined;
    const [answer, against, difference, parts] = step.attribution[k];
    return { answer, against, difference, parts: replay.parts.map((p, i) => ({ ...p, difference: parts[i] })) };
  }
  function drawAttribution() {
    const P = attributionAt(state.query) ? state.query : T - 1, a = attributionAt(P);
    const scale = Math.max(1e-12, ...a.parts.map((p) => Math.abs(p.difference)));
    const table = el('table', { id: 'attribution-table', 'data-position': P });
    a.parts.forEach((p, i) => {
      const bar = el('div', { class: 'bar', style: `width:${(60 * Math.abs(p.difference)) / scale}px;` +
        `background:${signedColour(p.difference, scale)};margin-left:${p.difference >= 0 ? 60 : 60 - (60 * Math.abs(p.difference)) / scale}px` });
      table.append(el('tr', { id: `attr-part-${i}`, 'data-name': p.name, 'data-value': p.difference },
        el('td', { text: mgWords.part(p) }), el('td', { class: 'bar-cell' }, bar), el('td', { text: signed(p.difference, 4) })));
    });
    $('attribution-note').textContent = words('attributionNote', P, label(P), P !== state.query, a.answer, a.against, fixed(a.difference, 4));
    $('attribution').replaceChildren(table);
  }

  // The next symbol after the query (inspect-heads --next-symbol there: the ten most likely,
  // sampled as drawn), of the page's model or of the slider's step; the last position's
  // where the query has none precomputed.
  function drawNext() {
    const positions = data.next.positions, k0 = positions.indexOf(state.query), k = k0 < 0 ? positions.length - 1 : k0;
    const P = positions[k], top = stepNow() ? stepNow().next[k] : data.next.at[k];
    const table = el('table', { id: 'next-table', 'data-position': P },
      el('tr', {}, el('th', { text: words('symbol') }), el('th', { text: words('probability') }), el('th', { text: words('logit') })));
    top.forEach(([symbol, probability, logit], i) => table.append(el('tr', { id: `next-row-${i}`, 'data-symbol': symbol,
      'data-probability': probability, 'data-logit': logit },
    el('td', { text: symbolLabel(symbol) }),
    el('td', {}, el('span', { class: 'bar', style: `display:inline-block;width:${Math.round(60 * probability)}px;background:#1f77b4` }),
      ' ' + fixed(probability, 4)),
    el('td', { text: fixed(logit, 3) }))));
    $('next-note').textContent = words('explorerNextNote', P, label(P), k0 < 0);
    $('next').replaceChildren(table);
  }

  // Layers x positions: the corrupt run with the clean stream entering the block at one position.
  function drawPatching() {
    const p = circuit.patching;
    if (!p.available) {
      $('patching-note').textContent = words('noPatchingHere', mgWords.reason(p));
      return;
    }
    $('patching-note').textContent = words('patchingNote', p.corrupt, p.answer, p.against, fixed(p.clean, 4), fixed(p.corrupt_difference, 4));
    // The clean and corrupt differences too close for a share (interp/patching.h's kMinPatchingGap).
    const warning = $('patching-warning');
    warning.hidden = !p.warning;
    warning.textContent = p.warning ? words('gapWarning', fixed(p.clean, 4), fixed(p.corrupt_difference, 4), fixed(Math.abs(p.gap), 4), p.min_gap) : '';
    const canvas = $('patching-canvas');
    const { left, top } = drawPatchingStreams(canvas, Array.from({ length: T }, (_, t) => label(t)), p.streams);
    canvas.onmousemove = (e) => {
      const r = canvas.getBoundingClientRect();
      const t = Math.floor((e.clientX - r.left - left) / CELL), l = Math.floor((e.clientY - r.top - top) / STRIP_ROW);
      if (t >= 0 && t < T && l >= 0 && l < L) $('patching-hover').textContent = words('patchingHover', l, t, label(t), fixed(p.streams[l][t], 4));
    };
    $('patching-legend-box').replaceChildren(patchingLegend('patching-legend'));
    const heads = el('table', { id: 'patching-heads' }, el('tr', {}, el('th', { text: words('headCol') }), el('th', { text: words('restoredCol') })));
    for (let l = 0; l < L; l++)
      for (let h = 0; h < H; h++)
        heads.append(el('tr', { id: `patch-head-${l}-${h}`, 'data-value': p.heads[l][h] }, el('td', { text: headName(l, h) }),
          el('td', { style: `background:${signedColour(p.heads[l][h], 1)}`, text: signed(p.heads[l][h], 4) })));
    $('patching-heads-box').replaceChildren(heads);
  }

  // Heads as nodes (a column per layer), an edge from a writer to a later reader where a
  // composition score is at least 1.5 times its random baseline (the 40 strongest), its
  // width by that ratio, its colour by the mode (Q blue, K green, V red).
  function drawGraph() {
    const c = circuit.composition, base = c.baseline, MODES = [['q', '#1f77b4'], ['k', '#2ca02c'], ['v', '#d62728']];
    const edges = [];
    for (const pair of c.pairs) {
      const [mode, colour] = MODES.reduce((best, m) => (pair[m[0]] / base[m[0]] > pair[best[0]] / base[best[0]] ? m : best));
      const ratio = pair[mode] / base[mode];
      if (ratio >= 1.5) edges.push({ pair, mode, colour, ratio });
    }
    edges.sort((a, b) => b.ratio - a.ratio);
    edges.length = Math.min(edges.length, 40);
    const gapX = 110, gapY = Math.max(26, Math.min(48, 360 / H)), W = 40 + gapX * L, Hh = 30 + gapY * H;
    const at = (l, h) => [30 + gapX * l, 24 + gapY * h];
    const svg = svgEl('svg', { id: 'circuit-graph', width: W, height: Hh + 12, role: 'img', 'aria-label': words('graphLabel') });
    for (const e of edges) {
      const [x1, y1] = at(e.pair.writer[0], e.pair.writer[1]), [x2, y2] = at(e.pair.reader[0], e.pair.reader[1]);
      const line = svgEl('line', { class: 'edge', x1, y1, x2, y2, stroke: e.colour, 'stroke-opacity': 0.7,
        'stroke-width': Math.min(8, 1 + 2 * (e.ratio - 1.5)), 'data-writer': e.pair.writer.join('.'),
        'data-reader': e.pair.reader.join('.'), 'data-mode': e.mode, 'data-score': e.pair[e.mode] });
      line.append(svgEl('title', {}, words('edgeTitle', headName(...e.pair.writer), headName(...e.pair.reader), e.mode.toUpperCase(),
        fixed(e.pair[e.mode], 4), fixed(e.ratio, 2), fixed(e.pair.q, 3), fixed(e.pair.k, 3), fixed(e.pair.v, 3))));
      svg.append(line);
    }
    for (let l = 0; l < L; l++) {
      svg.append(svgEl('text', { x: at(l, 0)[0], y: 12, 'text-anchor': 'middle', 'font-size': 11 }, words('graphLayer', l)));
      for (let h = 0; h < H; h++) {
        const [x, y] = at(l, h);
        const node = svgEl('g', { class: 'node', id: `node-${l}-${h}` });
        node.append(svgEl('circle', { cx: x, cy: y, r: 9, fill: '#fff', stroke: headColour(h), 'stroke-width': 2 }),
          svgEl('text', { x, y: y + 21, 'text-anchor': 'middle', 'font-size': 9 }, headName(l, h)));
        node.addEventListener('click', () => chooseHead(l, h));
        svg.append(node);
      }
    }
    $('graph-note').textContent = words('graphNote', edges.length, fixed(base.q, 3), fixed(base.k, 3), fixed(base.v, 3));
    $('graph').replaceChildren(svg);
  }

  // The chosen kind's chain (inspect-heads --explain): its writer and carrier told in words
  // and ringed in the composition graph (the writer gold, the carrier orange).
  function drawChain() {
    const chain = stepNow() ? stepNow().chain : circuit.chain, select = $('chain-kind');
    $('chain-note').dataset.step = stepNow() ? stepNow().step : 'page';
    if (!chain) {
      for (const ring of document.querySelectorAll('#circuit-graph .chain-ring')) ring.remove();
      $('chain-note').textContent = stepNow() && circuit.chain ? words('replayNoChainHere', stepNow().step) : words('noChain');
      $('chain-note').dataset.writer = $('chain-note').dataset.carrier = '';
      select.disabled = true;
      return;
    }
    select.disabled = false;
    const show = () => {
      const k = chain.kinds.find((x) => x.kind === select.value);
      for (const ring of document.querySelectorAll('#circuit-graph .chain-ring')) ring.remove();
      const ringHead = (name, colour, role) => {
        const m = /^L(\d+)\.H(\d+)$/.exec(name || '');
        const node = m && $(`node-${m[1]}-${m[2]}`);
        if (!node) return;
        const c = node.querySelector('circle');
        node.prepend(svgEl('circle', { class: 'chain-ring', 'data-role': role, cx: c.getAttribute('cx'), cy: c.getAttribute('cy'),
          r: 14, fill: 'none', stroke: colour, 'stroke-width': 4 }));
      };
      ringHead(k.writer, '#d4a017', 'writer');
      if (k.carrier) ringHead(k.carrier, '#ff7f0e', 'carrier');
      const status = k.learned ? '' : k.shortcut
        ? words('shortcut', k.cue, fixed(k.no_distractor_accuracy, 3), fixed(k.distractor_accuracy, 3))
        : words('notLearned');
      let text = words('chainAccuracy', kind(k.kind), fixed(k.accuracy, 3), k.items, status) +
        words('chainWriter', k.writer, signed(k.writer_attribution, 4), signed(k.difference, 4), fixed(k.writer_restores, 4));
      text += k.carrier
        ? words('chainCarrier', k.carrier, fixed(k.carrier_restores, 4), k.writer, k.composition === 'K', k.composition,
          fixed(k.composition_score, 4), fixed(k.baseline, 4))
        : words('noCarrier');
      text += words('chainMlps', signed(k.mlp_attribution, 4));
      $('chain-note').textContent = text;
      $('chain-note').dataset.writer = k.writer || '';
      $('chain-note').dataset.carrier = k.carrier || '';
    };
    fillKinds(select, chain.kinds);
    select.onchange = show;
    show();
  }

  // The chosen kind's circuit of edges (inspect-heads --circuit), drawn as mgDraw draws it.
  function drawEdgeCircuit() {
    const c = circuit.edge_circuit, select = $('edge-circuit-kind');
    if (!c) {
      $('edge-circuit-note').textContent = words('noEdgeCircuit');
      select.disabled = true;
      return;
    }
    const show = () => {
      const { svg, note } = edgeCircuitGraph(c, select.value, chooseHead);
      $('edge-circuit').replaceChildren(svg);
      $('edge-circuit-note').textContent = note;
    };
    fillKinds(select, c.kinds);  // in the page's language, the chosen one kept
    select.onchange = show;
    show();
  }

  // ---- the step slider (--replay): the run's kept evaluations, its events, the curves under it --
  // mgDraw.drawReplay draws the marks, the events and the curves, as on serve's live page;
  // moving the slider redraws the heads, the next symbol, the attribution and the chain.
  const replayTrack = replay && { steps: replay.steps.map((s) => s.step), events: replay.events,
    evals: (data.run && data.run.evals) || [] };
  const shownIndex = () => (state.step === null ? replay.steps.length - 1 : state.step);
  function drawStepLabel() {
    const step = stepNow();
    $('step-label').textContent = step ? words('replayStepShown', step.step, fixed(step.loss, 4)) : words('replayPageModel', data.source);
    document.body.dataset.step = step ? String(step.step) : 'page';
  }
  function drawReplay() {
    if (!replay) return;
    drawStepLabel();
    mgDraw.drawReplay(replayTrack, shownIndex(), chooseStep);
  }
  // Index I of the kept evaluations (null: the page's own model) redrawn everywhere it shows.
  function chooseStep(i) {
    state.step = i;
    $('step-slider').value = String(i === null ? replay.steps.length - 1 : i);
    labelGrid();
    thumbs.forEach(({ canvas, l, h }) => canvas.getContext('2d').putImageData(heatmapImage(canvas.getContext('2d'), T, weightsOf(l, h)), 0, 0));
    drawStrips();
    drawReadout();
    drawAttribution();
    drawNext();
    chooseHead(state.head.layer, state.head.head);
    drawChain();
    drawStepLabel();
    mgDraw.drawStepCurves(replayTrack, shownIndex());
    document.body.dataset.stepDraws = String(Number(document.body.dataset.stepDraws || 0) + 1);
  }
  function buildReplay() {
    if (!replay) return;
    $('replay-section').hidden = false;
    const slider = $('step-slider');
    slider.max = String(replay.steps.length - 1);
    slider.value = slider.max;
    slider.addEventListener('input', () => chooseStep(Number(slider.value)));
    $('step-page-model').addEventListener('click', () => chooseStep(null));
    window.addEventListener('resize', drawReplay);
    drawReplay();
  }

  // ---- the glossary and the language ---------------------------------------------------------
  function drawGlossary() {
    mgWords.drawGlossary($('glossary-section'), el);
  }
  // Everything with words in it, drawn again in the language just chosen; the state (the
  // query, the layer, the open head) stays.
  function redrawWords() {
    mgWords.applyStatic();
    document.title = words('explorerTitle');
    drawHeader();
    labelSymbols();
    labelLayerSelect();
    labelGrid();
    labelTraceNote();
    drawStrips();
    drawReadout();
    drawAttribution();
    drawNext();
    chooseHead(state.head.layer, state.head.head);
    drawCircuitAndRun();
    drawReplay();
    drawGlossary();
  }
  // The sections below the head, each from the page's data: patching, the composition graph,
  // the chain, the circuit of edges, the run (at the start and after a language switch).
  function drawCircuitAndRun() {
    drawPatching();
    drawGraph();
    drawChain();
    drawEdgeCircuit();
    drawRun();
  }

  // The head to open with: the one that writes the answer at the last position (the largest
  // direct logit attribution there); without attribution, the head of least mean entropy.
  // Layer 0's heads mostly spread their weight, so opening there showed an almost blank page.
  function mostInformativeHead() {
    const a = circuit && circuit.attribution && circuit.attribution.at[String(T - 1)];
    let best = null;
    for (const p of (a ? a.parts : [])) {
      if (!(p.layer >= 0 && p.head >= 0)) continue;  // the embeddings, an MLP, ln_f's bias
      if (!best || Math.abs(p.difference) > Math.abs(best.difference)) best = p;
    }
    if (best) return { layer: best.layer, head: best.head };
    let least = { layer: 0, head: 0 }, entropy = Infinity;
    data.heads.forEach((x) => {
      if (x.summary.mean_entropy < entropy) {
        entropy = x.summary.mean_entropy;
        least = { layer: x.layer, head: x.head };
      }
    });
    return least;
  }

  // ---- start ---------------------------------------------------------------------------------
  mgWords.applyStatic();
  document.title = words('explorerTitle');
  mgWords.bindSwitch($('lang-switch'), redrawWords);
  drawHeader();
  buildLayerSelect();
  buildSymbols();
  buildGrid();
  buildTraceSelect();
  buildDetailEvents();
  const first = mostInformativeHead();
  state.layer = first.layer;
  $('layer-select').value = String(first.layer);
  setQuery(T - 1, true);
  chooseHead(first.layer, first.head);
  drawCircuitAndRun();
  buildReplay();
  drawGlossary();
  document.body.dataset.readyMs = performance.now().toFixed(1);
  performance.mark('explorer-ready');
  document.body.dataset.ready = '1';
  drawThumbsLazily();
}());
