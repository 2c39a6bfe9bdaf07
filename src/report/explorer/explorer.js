// The head explorer's script. It reads the JSON that src/report/explorer.cpp embedded in
// #explorer-data and draws it: no model arithmetic happens here, only look-ups. Large
// matrices go to canvases (never one DOM node per cell), the grid's thumbnails are drawn
// a few per frame after the page is ready, and a head's weights are decoded on first use.
// When the first view is on screen, document.body.dataset.ready = "1" and readyMs holds the
// time since navigation start (performance mark "explorer-ready").
'use strict';

(function () {
  performance.mark('explorer-script');
  const data = JSON.parse(document.getElementById('explorer-data').textContent);
  performance.mark('explorer-parsed');
  const L = data.model.n_layer, H = data.model.n_head, T = data.tokens.length;
  const { CELL, STRIP_ROW, PALETTE, drawStripRow, fixed, signed, headColour, el, sizeCanvas, heatmapImage, signedColour, svgEl,
    runCharts, drawPatchingStreams, edgeCircuitGraph } = mgDraw;
  const $ = (id) => document.getElementById(id);
  const state = { layer: 0, query: T - 1, pinned: T - 1, head: { layer: 0, head: 0 }, tracePosition: T - 1 };

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

  // Weights: 24-bit steps of 1 / weight_steps, row t holding keys 0..t (report/explorer.h).
  const weightCache = new Map();  // head index -> Float64Array, the lower triangle
  function weightsOf(l, h) {
    const i = headIndex(l, h);
    if (!weightCache.has(i)) {
      const bytes = decodeBytes(data.heads[i].weights), out = new Float64Array(bytes.length / 3);
      for (let k = 0, b = 0; k < out.length; k++, b += 3) out[k] = (bytes[b] | (bytes[b + 1] << 8) | (bytes[b + 2] << 16)) / data.weight_steps;
      weightCache.set(i, out);
    }
    return weightCache.get(i);
  }
  // w[t][s]: the weight query t gives key s (exactly 0 for s > t).
  function weight(l, h, t, s) {
    return s > t ? 0 : weightsOf(l, h)[(t * (t + 1)) / 2 + s];
  }
  const label = (s) => data.labels[s];

  // ---- header ----------------------------------------------------------------------------
  function drawHeader() {
    const m = data.model;
    $('model-line').textContent = `model: ${m.n_layer} layers × ${m.n_head} heads, D = ${m.n_embd}, d = ${m.head_width}, ` +
      `block_size ${m.block_size}, ${m.vocab_size} symbols, ${m.position} positions · ${data.source} · text of ${T} symbols` +
      (data.loss !== null ? ` · loss on the text ${fixed(data.loss, 4)} nats/symbol` : '');
    const r = data.roles;
    $('probe-line').textContent = r.probe
      ? `probe: ${r.probe} · accuracy ${fixed(r.probe_accuracy, 3)} · ablation cost = accuracy lost with the head ` +
        `${r.ablation === 'mean' ? 'mean-ablated' : 'zeroed'} · role scores over ${r.texts}`
      : `no probe: role scores over ${r.texts}; no ablation cost (give --probe FILE)`;
  }

  // ---- the text row and the strips --------------------------------------------------------
  function buildSymbols() {
    const row = $('symbols');
    for (let s = 0; s < T; s++) {
      const b = el('button', { type: 'button', 'data-pos': s, id: 'sym-' + s, tabindex: '-1',
        title: `position ${s}: ${label(s)}`, text: label(s) });
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
    const strips = $('strips');
    strips.addEventListener('mousemove', (e) => {
      const r = strips.getBoundingClientRect();
      const s = Math.floor((e.clientX - r.left) / CELL), h = Math.floor((e.clientY - r.top) / STRIP_ROW);
      if (s < 0 || s >= T || h < 0 || h >= H) return;
      const t = state.query;
      $('strip-hover').textContent = s > t
        ? `key ${s} ${label(s)} comes after query ${t}: masked, weight 0`
        : `query ${t} ${label(t)} → key ${s} ${label(s)}: ` +
          Array.from({ length: H }, (_, hh) => `head ${state.layer}.${hh} ${fixed(weight(state.layer, hh, t, s), 7)}`).join(' · ');
    });
  }

  function drawStrips() {
    const labels = $('strip-labels');
    labels.replaceChildren();
    for (let h = 0; h < H; h++) {
      labels.append(el('div', {}, el('span', { class: 'swatch', style: `background:${headColour(h)}` }),
        `head ${state.layer}.${h}`));
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
      const details = el('details', {}, el('summary', { text: `all ${t + 1} weights` }),
        el('div', { class: 'row-values', text: row.map((w, s) => `${s} ${label(s)} ${fixed(w, 7)}`).join(' · ') }));
      table.append(el('tr', { id: `readout-${l}-${h}`, class: 'readout-head', 'data-layer': l, 'data-head': h,
        'data-query': t, 'data-weights': row.map((w) => fixed(w, 7)).join(' ') },
      el('td', {}, el('span', { class: 'swatch', style: `background:${headColour(h)}` }), `head ${l}.${h}`),
      el('td', { text: order.map((s) => `${label(s)} (${s}) ${fixed(row[s], 7)}`).join('  ') }),
      el('td', {}, details)));
    }
    $('readout').replaceChildren(el('p', { class: 'hint', text:
      `query ${t} ${label(t)}${t === state.pinned ? ' (pinned)' : ''}, layer ${l}: each head's three largest weights; every row sums to 1` }), table);
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
    if (pin && tracedAt(t)) setTracePosition(t);
  }

  function buildLayerSelect() {
    const select = $('layer-select');
    for (let l = 0; l < L; l++) select.append(el('option', { value: l, text: `layer ${l}` }));
    select.addEventListener('change', () => {
      state.layer = Number(select.value);
      drawStrips();
      drawReadout();
    });
  }

  // ---- the grid of heads -------------------------------------------------------------------
  const roleOf = (l, h) => data.roles.heads[headIndex(l, h)].roles;
  function scoreLine(r) {
    return `prev ${fixed(r.previous_token, 2)} · cur ${fixed(r.current_token, 2)} · first ${fixed(r.first_position, 2)} · ` +
      `ind ${fixed(r.induction, 2)} · ans ${fixed(r.answer_finding, 2)} · off ${r.best_offset} ${fixed(r.best_offset_score, 2)}`;
  }
  const dropText = (r) => (r.accuracy_drop === null ? 'no probe' : `ablation ${signed(r.accuracy_drop, 3)}`);

  const thumbs = [];
  function buildGrid() {
    const grid = $('grid');
    const size = H <= 4 ? 84 : 56;
    grid.style.gridTemplateColumns = `max-content repeat(${H}, ${H <= 4 ? 'max-content' : size + 8 + 'px'})`;
    for (let l = 0; l < L; l++) {
      grid.append(el('div', { class: 'layer-label', text: `layer ${l}` }));
      for (let h = 0; h < H; h++) {
        const r = roleOf(l, h);
        const canvas = el('canvas', { width: T, height: T, style: `width:${size}px;height:${size}px` });
        // Few heads: the scores beside the heatmap; many: the role and cost under it.
        const text = el('span', { class: 'cell-text' }, el('span', { class: 'role', text: `${l}.${h} ${r.role}` }),
          el('span', { class: 'scores', text: dropText(r) }));
        if (H <= 4) {
          text.append(el('span', { class: 'scores', text: `prev ${fixed(r.previous_token, 2)} · cur ${fixed(r.current_token, 2)}` }),
            el('span', { class: 'scores', text: `first ${fixed(r.first_position, 2)} · ind ${fixed(r.induction, 2)}` }),
            el('span', { class: 'scores', text: `ans ${fixed(r.answer_finding, 2)} · off ${r.best_offset} ${fixed(r.best_offset_score, 2)}` }));
        }
        const cell = el('button', { type: 'button', class: H <= 4 ? 'head-cell wide' : 'head-cell', id: `cell-${l}-${h}`,
          'data-layer': l, 'data-head': h, title: `head ${l}.${h}: ${r.role}; ${scoreLine(r)}; ${dropText(r)}` }, canvas, text);
        cell.addEventListener('click', () => chooseHead(l, h));
        grid.append(cell);
        thumbs.push({ canvas, l, h });
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
    $('detail-title').textContent = `Head ${l}.${h}: ${roleOf(l, h).role}`;
    drawDetailHeatmap();
    drawDetailInfo();
    drawTrace();
    drawCircuits();
  }

  function drawDetailHeatmap() {
    const { layer: l, head: h } = state.head;
    const canvas = $('detail-canvas');
    canvas.width = T;
    canvas.height = T;
    canvas.style.width = canvas.style.height = '300px';
    const ctx = canvas.getContext('2d');
    ctx.putImageData(heatmapImage(ctx, T, weightsOf(l, h)), 0, 0);
  }
  function detailCellAt(e) {
    const r = $('detail-canvas').getBoundingClientRect();
    return { t: Math.floor(((e.clientY - r.top) / r.height) * T), s: Math.floor(((e.clientX - r.left) / r.width) * T) };
  }
  const cursor = { t: T - 1, s: T - 1 };  // the heatmap cell the keyboard points at
  function showDetailCell(t, s) {
    const { layer: l, head: h } = state.head;
    $('detail-hover').textContent = s > t ? `query ${t} ${label(t)}, key ${s} ${label(s)}: masked`
      : `head ${l}.${h}: query ${t} ${label(t)} → key ${s} ${label(s)}: ${fixed(weight(l, h, t, s), 7)}`;
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
    const r = roleOf(l, h), s = data.heads[headIndex(l, h)].summary, th = data.roles.thresholds;
    const row = (name, value, threshold) => el('tr', {}, el('td', { text: name }),
      el('td', { class: threshold !== undefined && value !== null && value >= threshold ? 'role-hit' : '', text: fixed(value, 3) }),
      el('td', { class: 'hint', text: threshold !== undefined ? `names the role at ≥ ${threshold}` : '' }));
    const table = el('table', { id: 'detail-roles' },
      el('tr', {}, el('th', { text: 'role score' }), el('th', { text: 'value' }), el('th', { text: '' })),
      row('previous token', r.previous_token, th.previous_token),
      row(`best offset ${r.best_offset}`, r.best_offset_score, r.best_offset <= -2 ? th.offset : undefined),
      row('current token', r.current_token, th.current_token),
      row('first position', r.first_position, th.first_position),
      row('induction', r.induction, th.induction),
      row('answer-finding', r.answer_finding, th.answer_finding),
      row('copy-forward', r.copy_forward, th.copy_forward));
    // Per question kind: a head may find (or copy) one kind's answers and not another's.
    for (const [kind, value] of Object.entries(r.answer_finding_by_kind || {}))
      table.append(row(`answer-finding: ${kind}`, value, th.answer_finding));
    for (const [kind, value] of Object.entries(r.copy_forward_by_kind || {}))
      table.append(row(`copy-forward: ${kind}`, value, th.copy_forward));
    const byKind = Object.entries(r.accuracy_drop_by_kind || {}).map(([kind, d]) => `${kind} ${signed(d, 3)}`).join(', ');
    const drop = r.accuracy_drop === null ? 'no probe: no ablation cost'
      : `ablation cost: probe accuracy ${fixed(data.roles.probe_accuracy, 3)} → ${fixed(data.roles.probe_accuracy - r.accuracy_drop, 3)} ` +
        `(drop ${signed(r.accuracy_drop, 3)}, ${data.roles.ablation} ablation)` + (byKind ? `; by kind: ${byKind}` : '');
    $('detail-info').replaceChildren(
      el('p', {}, el('strong', { text: `role: ${r.role}` })),
      table,
      el('p', { id: 'detail-drop', text: drop }),
      el('p', { text: `on this text: entropy ${fixed(s.mean_entropy, 3)} nats · reads offset ${s.top_offset} most ` +
        `(${fixed(100 * s.top_offset_share, 0)}%) · on position 0 ${fixed(s.first_share, 3)} · ` +
        `importance (loss with the head zeroed − loss) ${signed(s.importance, 4)} nats` }),
      el('p', { class: 'hint', text: 'Hover the heatmap (or focus it and use the arrow keys) for a weight; click a row (Enter) to make it the query.' }));
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
    $('trace-note').textContent = data.traces.all_positions
      ? `traces at every position (${T})`
      : `traces at positions ${data.traces.positions.join(', ')} only (layers × heads × T is over ${data.traces.budget}; ` +
        'inspect-heads --position P adds one)';
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
      box.replaceChildren(el('p', { text: `no trace at position ${P}` }));
      return;
    }
    const d = tr.d, rope = tr.position_type === 'rope';
    // The keys' and values' tables are built when opened (T rows of d numbers each).
    const vectorTable = (title, rows, idPrefix) => {
      const table = el('table', {}, el('tr', {}, el('th', { text: 's' }), el('th', { class: 'sym', text: 'key' }), el('th', { class: 'sym', text: title })));
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
    const keyRows = lazyDetails(`the ${P + 1} keys`, () => vectorTable(rope ? 'k_s (after RoPE at s)' : 'k_s', rowsOf(entry.keys), 'trace-key'));
    const valueRows = lazyDetails(`the ${P + 1} values`, () => vectorTable('v_s', rowsOf(entry.values), 'trace-value'));
    const scores = el('table', { id: 'trace-scores' }, el('tr', {}, ...['s', 'key', 'q·k_s', '/√d', 'mask', 'weight', '(forward pass)']
      .map((x, i) => el('th', { class: i === 1 ? 'sym' : '', text: x }))));
    for (let s = 0; s < T; s++) {
      const masked = s > P;
      scores.append(el('tr', { class: masked ? 'masked' : '' },
        el('td', { text: s }), el('td', { class: 'sym', text: label(s) }),
        el('td', { id: `trace-dot-${s}`, text: masked ? '' : fixed(tr.dots[s], 6) }),
        el('td', { id: `trace-score-${s}`, text: masked ? '' : fixed(tr.scores[s], 6) }),
        el('td', { text: masked ? '−∞' : '0' }),
        el('td', { id: `trace-weight-${s}`, text: fixed(masked ? 0 : tr.weights[s], 6) }),
        el('td', { text: `(${fixed(weight(l, h, P, s), 6)})` })));
    }
    const pushes = (list, kind) => el('span', {}, ...list.map((p, i) => el('span', { id: `trace-${kind}-${i}`, 'data-symbol': p.symbol,
      'data-logit': p.logit, text: ` “${p.symbol}” ${signed(p.logit, 6)}` })));
    box.replaceChildren(el('p', { id: 'trace-title', text: `layer ${l}, head ${h}, query position ${P} “${label(P)}”: ` +
      `D = ${tr.D}, d = ${d}; the head reads rows ${h * d}..${h * d + d - 1} of Wq, Wk, Wv and columns ${h * d}..${h * d + d - 1} of Wo. ` +
      'head output = softmax(q kᵀ / √d + causal mask) v, then Wo onto the residual stream.' }),
    el('ol', {},
      el('li', {}, `x_t = LayerNorm(residual stream at ${P}; blocks.${l}.ln1) [D = ${tr.D}] `, vector(tr.x, 'trace-x')),
      el('li', {}, `q_t = x_t Wq_hᵀ [d = ${d}] `, vector(tr.q_raw, 'trace-q-raw'),
        rope ? el('div', {}, `after RoPE at position ${P}: `, vector(tr.q, 'trace-q')) : el('div', { text: 'learned positions: no rotation' })),
      el('li', {}, `keys k_s = x_s Wk_hᵀ for s = 0..${P}`, keyRows),
      el('li', {}, `q·k_s, divided by √d (times `, el('span', { id: 'trace-scale', text: fixed(tr.scale, 9) }),
        '), the causal mask, and the softmax: row ', String(P), ' of projected_weights', scores),
      el('li', {}, 'values v_s = x_s Wv_hᵀ', valueRows, el('div', {}, 'head output = Σ_s weight_s v_s ', vector(tr.head_output, 'trace-head-output'))),
      el('li', {}, `the head's slice of Wo applied: its contribution to the residual stream at ${P} [D] `, vector(tr.contribution, 'trace-contribution')),
      el('li', {}, `output symbols it pushes (direct logit attribution, an approximation: centred, divided by the final stream's σ ${fixed(tr.final_sigma, 6)}, ` +
        'times ln_f.weight, through the vocabulary head; later blocks ignored): up', pushes(tr.top_up, 'up'), el('br'), 'down', pushes(tr.top_down, 'down'))));
  }

  // ---- circuits --------------------------------------------------------------------------------
  const circuitCache = new Map();
  function drawCircuits() {
    const box = $('circuits');
    const c = data.circuits;
    if (!c.available) {
      box.replaceChildren(el('p', { text: `not drawn: ${c.reason}` }));
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
          hover.textContent = `${name.toUpperCase()}: ${rowName} “${sym(a)}”, ${columnName} “${sym(b)}”: ≈ ${fixed(table[a * V + b], 3)} (8-bit, for drawing)`;
      });
      return el('div', {}, el('strong', { text: name.toUpperCase() }), ` (rows: ${rowName}, columns: ${columnName}; red > 0 > blue, ±${fixed(max, 3)})`,
        el('br'), canvas,
        el('ol', {}, ...top.map(([a, b, v]) => el('li', { text: `“${sym(a)}” → “${sym(b)}” ${fixed(v, 4)}` }))));
    };
    box.replaceChildren(
      el('p', { id: 'circuit-copy', text: `OV copy score ${fixed(entry.copy_score, 3)} (Σλ / Σ|λ|: 1 copies, −1 suppresses) · ` +
        `symbols whose own logit tops their OV row: ${fixed(100 * entry.diagonal_top1, 1)}%` }),
      el('div', { class: 'circuit-pair' },
        panel('qk', tables.qk, entry.qk_top, 'query symbol', 'key symbol'),
        panel('ov', tables.ov, entry.ov_top, 'attended symbol', 'output symbol')),
      hover,
      el('p', { class: 'hint', text: 'Through each symbol\'s embedding and this block\'s ln1: exact for layer 0 at offset 0; ' +
        'later layers leave out the earlier blocks, and OV treats ln_f as linear.' }));
  }

  // ---- the run's curves (inline SVG) -----------------------------------------------------------
  function drawRun() {
    if (!data.run) return;
    $('run-section').hidden = false;
    $('run').append(...runCharts(data.run));
  }

  // ---- the circuit: attribution bars, the patching heatmap, the composition graph ------------
  const circuit = data.circuit;

  // Each part of the final stream at the query (or the last position, where the query has
  // none) and its share of the logit difference, as a bar.
  function drawAttribution() {
    const at = circuit.attribution.at, P = at[String(state.query)] ? state.query : T - 1, a = at[String(P)];
    const scale = Math.max(1e-12, ...a.parts.map((p) => Math.abs(p.difference)));
    const table = el('table', { id: 'attribution-table', 'data-position': P });
    a.parts.forEach((p, i) => {
      const bar = el('div', { class: 'bar', style: `width:${(60 * Math.abs(p.difference)) / scale}px;` +
        `background:${signedColour(p.difference, scale)};margin-left:${p.difference >= 0 ? 60 : 60 - (60 * Math.abs(p.difference)) / scale}px` });
      table.append(el('tr', { id: `attr-part-${i}`, 'data-name': p.name, 'data-value': p.difference },
        el('td', { text: p.name }), el('td', { class: 'bar-cell' }, bar), el('td', { text: signed(p.difference, 4) })));
    });
    $('attribution-note').textContent = `position ${P} ${label(P)}` + (P !== state.query ? ' (the query has no precomputed attribution)' : '') +
      `: answer ${a.answer} against ${a.against}, logit difference ${fixed(a.difference, 4)}; each part through ln_f with ` +
      'its scale frozen from the whole stream (direct logit attribution, as TransformerLens computes it)';
    $('attribution').replaceChildren(table);
  }

  // Layers x positions: the corrupt run with the clean stream entering the block at one position.
  function drawPatching() {
    const p = circuit.patching;
    if (!p.available) {
      $('patching-note').textContent = `no patching on this page: ${p.reason}`;
      return;
    }
    $('patching-note').textContent = `the corrupted partner ${p.corrupt} ; logit difference ${p.answer} − ${p.against}: ` +
      `clean ${fixed(p.clean, 4)}, corrupt ${fixed(p.corrupt_difference, 4)}; each square the fraction restored, ` +
      '(patched − corrupt) / (clean − corrupt), with the clean stream entering that layer at that position';
    const canvas = $('patching-canvas');
    const { left, top } = drawPatchingStreams(canvas, Array.from({ length: T }, (_, t) => label(t)), p.streams);
    canvas.addEventListener('mousemove', (e) => {
      const r = canvas.getBoundingClientRect();
      const t = Math.floor((e.clientX - r.left - left) / CELL), l = Math.floor((e.clientY - r.top - top) / STRIP_ROW);
      if (t >= 0 && t < T && l >= 0 && l < L)
        $('patching-hover').textContent = `layer ${l}, position ${t} ${label(t)}: restored ${fixed(p.streams[l][t], 4)}`;
    });
    const heads = el('table', { id: 'patching-heads' }, el('tr', {}, el('th', { text: 'head' }), el('th', { text: 'restored (its output from the clean run)' })));
    for (let l = 0; l < L; l++)
      for (let h = 0; h < H; h++)
        heads.append(el('tr', { id: `patch-head-${l}-${h}`, 'data-value': p.heads[l][h] }, el('td', { text: `${l}.${h}` }),
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
    const svg = svgEl('svg', { id: 'circuit-graph', width: W, height: Hh, role: 'img', 'aria-label': 'composition graph' });
    for (const e of edges) {
      const [x1, y1] = at(e.pair.writer[0], e.pair.writer[1]), [x2, y2] = at(e.pair.reader[0], e.pair.reader[1]);
      const line = svgEl('line', { class: 'edge', x1, y1, x2, y2, stroke: e.colour, 'stroke-opacity': 0.7,
        'stroke-width': Math.min(8, 1 + 2 * (e.ratio - 1.5)), 'data-writer': e.pair.writer.join('.'),
        'data-reader': e.pair.reader.join('.'), 'data-mode': e.mode, 'data-score': e.pair[e.mode] });
      line.append(svgEl('title', {}, `${e.pair.writer.join('.')} → ${e.pair.reader.join('.')}: ${e.mode.toUpperCase()}-composition ` +
        `${fixed(e.pair[e.mode], 4)} (${fixed(e.ratio, 2)} × baseline); Q ${fixed(e.pair.q, 3)} K ${fixed(e.pair.k, 3)} V ${fixed(e.pair.v, 3)}`));
      svg.append(line);
    }
    for (let l = 0; l < L; l++) {
      svg.append(svgEl('text', { x: at(l, 0)[0], y: 12, 'text-anchor': 'middle', 'font-size': 11 }, `layer ${l}`));
      for (let h = 0; h < H; h++) {
        const [x, y] = at(l, h);
        const node = svgEl('g', { class: 'node', id: `node-${l}-${h}` });
        node.append(svgEl('circle', { cx: x, cy: y, r: 9, fill: '#fff', stroke: headColour(h), 'stroke-width': 2 }),
          svgEl('text', { x, y: y + 3.5, 'text-anchor': 'middle', 'font-size': 9 }, `${l}.${h}`));
        node.addEventListener('click', () => chooseHead(l, h));
        svg.append(node);
      }
    }
    $('graph-note').textContent = `${edges.length} edges: composition at least 1.5 × the mean of random matrices of the same shapes ` +
      `(Q ${fixed(base.q, 3)}, K ${fixed(base.k, 3)}, V ${fixed(base.v, 3)}); blue Q, green K, red V; width by the ratio; click a head to open it`;
    $('graph').replaceChildren(svg);
  }

  // The chosen kind's chain (inspect-heads --explain): its writer and carrier told in words
  // and ringed in the composition graph (the writer gold, the carrier orange).
  function drawChain() {
    const chain = circuit.chain, select = $('chain-kind');
    if (!chain) {
      $('chain-note').textContent = 'no probe set: the chain is found on one (inspect-heads --html ... --probe FILE)';
      select.disabled = true;
      return;
    }
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
        ? ` — learned by a shortcut: the ${k.cue || 'cue'} alone (${fixed(k.no_distractor_accuracy, 3)} without distractors, ` +
          `${fixed(k.distractor_accuracy, 3)} with them); the heads that answer it:`
        : ' — not learned (under 0.9); the best candidates:';
      let text = `${k.kind}: accuracy ${fixed(k.accuracy, 3)} on ${k.items} probe items` + status +
        `. Writer ${k.writer}: direct logit attribution ${signed(k.writer_attribution, 4)} of the difference ${signed(k.difference, 4)}, ` +
        `restores ${fixed(k.writer_restores, 4)} with the answer swapped. `;
      text += k.carrier
        ? `Carrier ${k.carrier}: restores ${fixed(k.carrier_restores, 4)} with the key swapped; ${k.writer} reads it through its ` +
          `${k.composition === 'K' ? 'keys' : 'queries'} (${k.composition}-composition ${fixed(k.composition_score, 4)}, baseline ${fixed(k.baseline, 4)}). `
        : 'No carrier: no earlier head both restores with the key swapped and is read by the writer. ';
      text += `The MLPs: ${signed(k.mlp_attribution, 4)}.`;
      $('chain-note').textContent = text;
      $('chain-note').dataset.writer = k.writer || '';
      $('chain-note').dataset.carrier = k.carrier || '';
    };
    select.replaceChildren(...chain.kinds.map((k) => el('option', { value: k.kind, text: k.kind })));
    select.addEventListener('change', show);
    show();
  }

  // The chosen kind's circuit of edges (inspect-heads --circuit), drawn as mgDraw draws it.
  function drawEdgeCircuit() {
    const c = circuit.edge_circuit, select = $('edge-circuit-kind');
    if (!c) {
      $('edge-circuit-note').textContent = 'no probe set: the circuit is found on its pairs (inspect-heads --html ... --probe FILE)';
      select.disabled = true;
      return;
    }
    const show = () => {
      const { svg, note } = edgeCircuitGraph(c, select.value, chooseHead);
      $('edge-circuit').replaceChildren(svg);
      $('edge-circuit-note').textContent = note;
    };
    select.replaceChildren(...c.kinds.map((k) => el('option', { value: k.kind, text: k.kind })));
    select.addEventListener('change', show);
    show();
  }

  // ---- start ---------------------------------------------------------------------------------
  drawHeader();
  buildLayerSelect();
  buildSymbols();
  buildGrid();
  buildTraceSelect();
  buildDetailEvents();
  setQuery(T - 1, true);
  chooseHead(0, 0);
  drawPatching();
  drawGraph();
  drawChain();
  drawEdgeCircuit();
  drawRun();
  document.body.dataset.readyMs = performance.now().toFixed(1);
  performance.mark('explorer-ready');
  document.body.dataset.ready = '1';
  drawThumbsLazily();
}());
