// The live page's script (mini-gpt serve). It asks the server's /api/ endpoints, the JSON
// `inspect-heads --format json` prints, and draws the answers with the head explorer's
// drawing code (mgDraw, src/report/page/draw.js): no model arithmetic happens here. A text
// with a symbol outside the vocabulary, or longer than block_size, is marked and not sent.
// After each update document.body.dataset.updates counts up and dataset.updateMs holds the
// time from the last keystroke (or click) to the drawn page.
'use strict';

(function () {
  const { CELL, STRIP_ROW, drawStripRow, fixed, signed, headColour, el, sizeCanvas, heatmapImage, signedColour, runCharts,
    drawPatchingStreams, edgeCircuitGraph } = mgDraw;
  const $ = (id) => document.getElementById(id);
  const DEBOUNCE_MS = 40;
  let info = null, vocab = new Set(), L = 0, H = 0;
  const state = {
    tokens: [], query: 0, head: { layer: 0, head: 0 }, ablated: new Set(), patch: null,
    seq: 0, drawn: 0, inputAt: performance.now(), patterns: null,
  };
  let roles = null;  // /api/roles, once per model

  // ---- the server ------------------------------------------------------------------------
  async function api(path, params) {
    const query = new URLSearchParams();
    for (const [k, v] of Object.entries(params || {})) if (v !== undefined && v !== null && v !== '') query.set(k, v);
    const response = await fetch(path + (query.toString() ? '?' + query : ''));
    const body = await response.json();
    if (!response.ok) throw new Error(body.error || `HTTP ${response.status}`);
    return body;
  }
  const status = (text) => { $('status-line').textContent = text || '\u00a0'; };

  // ---- the text --------------------------------------------------------------------------
  // The symbols outside the vocabulary and the length, said in one line; null when it can be sent.
  function textProblem(symbols) {
    if (!symbols.length) return 'type a text';
    const unknown = [];
    symbols.forEach((c, i) => { if (!vocab.has(c)) unknown.push(`“${c}” at ${i}`); });
    if (unknown.length)
      return `not in the model's ${vocab.size}-symbol vocabulary: ${unknown.slice(0, 8).join(', ')}` +
        (unknown.length > 8 ? ` and ${unknown.length - 8} more` : '') + ' — nothing sent';
    if (symbols.length > info.model.block_size)
      return `${symbols.length} symbols, more than the model's block_size of ${info.model.block_size} — nothing sent`;
    return null;
  }

  function onInput() {
    state.inputAt = performance.now();
    clearTimeout(onInput.timer);
    onInput.timer = setTimeout(recompute, DEBOUNCE_MS);
  }

  function buildSymbols() {
    const row = $('symbols');
    row.replaceChildren(...state.tokens.map((c, s) => {
      const b = el('button', { type: 'button', id: 'sym-' + s, 'data-pos': s, title: `position ${s}: ${c}`, text: c });
      b.addEventListener('click', () => { state.query = s; state.inputAt = performance.now(); recompute(); });
      return b;
    }));
    if (state.patch && state.patch.position < state.tokens.length) $('sym-' + state.patch.position).classList.add('patched');
    $('sym-' + state.query).classList.add('query');
    const select = $('patch-position');
    select.replaceChildren(el('option', { value: '', text: '—' }),
      ...state.tokens.map((c, s) => el('option', { value: s, text: `${s} ${c}` })));
    select.value = state.patch ? String(state.patch.position) : '';
  }

  // ---- recomputing ---------------------------------------------------------------------
  const ablateSpec = () => [...state.ablated].sort().join(',');
  function corruptText() {
    if (!state.patch || state.patch.position >= state.tokens.length) return null;
    const t = state.tokens.slice();
    if (t[state.patch.position] === state.patch.symbol) return null;
    t[state.patch.position] = state.patch.symbol;
    return t.join('');
  }

  async function recompute() {
    const text = $('text').value;
    const symbols = Array.from(text);
    const problem = textProblem(symbols);
    $('text').classList.toggle('oov', problem !== null && symbols.length > 0);
    $('oov-line').textContent = problem || '\u00a0';
    if (problem) return;
    state.tokens = symbols;
    state.query = Math.min(state.query, symbols.length - 1);
    if (recompute.lastText !== text) {
      state.query = symbols.length - 1;
      recompute.lastText = text;
    }
    const seq = ++state.seq, P = state.query, { layer, head } = state.head;
    const answer = $('answer').value, against = $('against').value;
    const pair = answer && against && answer !== against ? { answer, against } : {};
    const sampling = { temperature: $('temperature').value, top_k: $('top-k').value };
    const corrupt = corruptText();
    const asks = [
      api('/api/patterns', { text }),
      api('/api/next', { text, position: P, ...sampling, ...pair }),
      state.ablated.size ? api('/api/next', { text, position: P, ...sampling, ...pair, ablate: ablateSpec() }) : null,
      api('/api/attribution', { text, position: P, ...pair }),
      api('/api/logit-lens', { text, position: P, answer: pair.answer }),
      api('/api/trace', { trace: `${layer}.${head}`, text, position: P }),
      corrupt ? api('/api/patch', { clean: text, corrupt }).catch((e) => ({ error: e.message })) : null,
    ];
    let answers;
    try {
      answers = await Promise.all(asks);
    } catch (e) {
      if (seq === state.seq) status(`the server refused: ${e.message}`);
      return;
    }
    if (seq !== state.seq) return;  // a newer text is on its way
    const [patterns, next, ablatedNext, attribution, lens, trace, patch] = answers;
    state.patterns = patterns;
    buildSymbols();
    drawStrips();
    drawGrid();
    drawReadout();
    drawNext(next, ablatedNext);
    drawHeadDetail(trace);
    drawAttribution(attribution);
    drawLens(lens);
    drawPatch(patch);
    status('');
    state.drawn++;
    document.body.dataset.updateMs = (performance.now() - state.inputAt).toFixed(1);
    document.body.dataset.updates = String(state.drawn);
  }

  // ---- the heads ---------------------------------------------------------------------------
  const headOf = (l, h) => state.patterns.layers[l].heads[h];
  const weightRow = (l, h, t) => headOf(l, h).projected_weights[t];
  // The lower triangle, row by row, as mgDraw.heatmapImage reads it.
  function triangle(l, h) {
    const rows = headOf(l, h).projected_weights, out = [];
    rows.forEach((row, t) => { for (let s = 0; s <= t; s++) out.push(row[s]); });
    return out;
  }

  function drawStrips() {
    const T = state.tokens.length, t = state.query;
    $('strip-labels').replaceChildren(...Array.from({ length: L * H }, (_, i) => {
      const l = Math.floor(i / H), h = i % H;
      return el('div', {}, el('span', { class: 'swatch', style: `background:${headColour(h)}` }), `head ${l}.${h}`);
    }));
    const ctx = sizeCanvas($('strips'), T * CELL, L * H * STRIP_ROW);
    for (let l = 0; l < L; l++)
      for (let h = 0; h < H; h++) {
        const row = weightRow(l, h, t);
        drawStripRow(ctx, (l * H + h) * STRIP_ROW, headColour(h), (s) => row[s], t, T);
      }
  }

  function drawReadout() {
    const t = state.query, table = el('table', { id: 'readout-table', 'data-query': t });
    for (let l = 0; l < L; l++)
      for (let h = 0; h < H; h++) {
        const row = weightRow(l, h, t).slice(0, t + 1);
        const order = row.map((w, s) => s).sort((a, b) => row[b] - row[a] || a - b).slice(0, 3);
        table.append(el('tr', { id: `readout-${l}-${h}`, 'data-query': t, 'data-weights': row.map((w) => fixed(w, 7)).join(' ') },
          el('td', { text: `head ${l}.${h}` }),
          el('td', { text: order.map((s) => `${state.tokens[s]} (${s}) ${fixed(row[s], 7)}`).join('  ') })));
      }
    $('readout').replaceChildren(el('p', { class: 'hint', text: `query ${t} ${state.tokens[t]}: each head's three largest weights` }), table);
  }

  function drawGrid() {
    const grid = $('grid'), T = state.tokens.length;
    grid.style.gridTemplateColumns = `max-content repeat(${H}, max-content)`;
    const cells = [];
    for (let l = 0; l < L; l++) {
      cells.push(el('div', { class: 'hint', text: `layer ${l}` }));
      for (let h = 0; h < H; h++) {
        const r = (headOf(l, h).roles || {});
        const canvas = el('canvas', { width: T, height: T, id: `heat-${l}-${h}`, style: 'width:84px;height:84px',
          title: `head ${l}.${h}: click to open` });
        canvas.getContext('2d').putImageData(heatmapImage(canvas.getContext('2d'), T, triangle(l, h)), 0, 0);
        canvas.addEventListener('click', () => chooseHead(l, h));
        const key = `${l}.${h}`, on = state.ablated.has(key);
        const ablate = el('button', { type: 'button', class: 'ablate', id: `ablate-${l}-${h}`, 'aria-pressed': on ? 'true' : 'false',
          text: on ? 'ablated' : 'ablate' });
        ablate.addEventListener('click', () => toggleAblation(key));
        const s = headOf(l, h).summary;
        cells.push(el('div', { class: 'head-cell' + (on ? ' ablated' : '') + (state.head.layer === l && state.head.head === h ? ' chosen' : ''),
          id: `cell-${l}-${h}` }, canvas, el('span', { class: 'cell-text' },
          el('span', { class: 'role', text: `${l}.${h} ${r.role || ''}` }),
          el('span', { class: 'hint', text: `importance ${signed(s.importance, 3)}` }), ablate)));
      }
    }
    grid.replaceChildren(...cells);
  }

  function chooseHead(l, h) {
    state.head = { layer: l, head: h };
    state.inputAt = performance.now();
    recompute();
  }
  function toggleAblation(key) {
    if (state.ablated.has(key)) state.ablated.delete(key);
    else state.ablated.add(key);
    state.inputAt = performance.now();
    recompute();
  }

  // ---- the next symbol ---------------------------------------------------------------------
  function fillPickers() {
    for (const id of ['answer', 'against']) {
      const select = $(id), kept = select.value;
      select.replaceChildren(el('option', { value: '', text: 'the model’s choice' }),
        ...info.vocab.map((c) => el('option', { value: c, text: c === ' ' ? '␠' : c })));
      select.value = kept;
    }
    $('patch-symbol').replaceChildren(...info.vocab.map((c) => el('option', { value: c, text: c === ' ' ? '␠' : c })));
  }

  function drawNext(next, ablated) {
    const header = el('tr', {}, el('th', { class: 'sym', text: 'symbol' }), el('th', { text: 'probability' }),
      el('th', { text: 'logit' }));
    if (ablated) header.append(el('th', { text: `with ${ablated.ablate.join(', ')} ablated` }));
    const table = el('table', { class: 'numbers', id: 'next-table' }, header);
    const ablatedBy = new Map((ablated ? ablated.top : []).map((e) => [e.symbol, e]));
    next.top.forEach((e, i) => {
      const row = el('tr', { id: `next-row-${i}`, 'data-symbol': e.symbol, 'data-probability': e.probability },
        el('td', { class: 'sym', text: e.symbol }),
        el('td', {}, el('span', { class: 'bar', style: `width:${Math.round(60 * e.probability)}px;background:#1f77b4` }), ' ' + fixed(e.probability, 4)),
        el('td', { text: fixed(e.logit, 3) }));
      if (ablated) {
        const a = ablatedBy.get(e.symbol);
        row.append(el('td', { class: 'ablated-probability', 'data-probability': a ? a.probability : '', text: a ? fixed(a.probability, 4) : '< top 10' }));
      }
      table.append(row);
    });
    const parts = [el('p', { id: 'next-difference', 'data-difference': next.difference, 'data-ablated-difference': ablated ? ablated.difference : '',
      text: `logit(${next.answer.symbol}) − logit(${next.against.symbol}) = ${signed(next.difference, 4)}` +
        (ablated ? ` · with ${ablated.ablate.join(', ')} ablated ${signed(ablated.difference, 4)}` : '') })];
    if (ablated) {
      const list = el('table', { class: 'numbers', id: 'next-ablated' }, el('tr', {}, el('th', { class: 'sym', text: 'ablated: symbol' }), el('th', { text: 'probability' })));
      ablated.top.forEach((e, i) => list.append(el('tr', { id: `next-ablated-${i}`, 'data-symbol': e.symbol, 'data-probability': e.probability },
        el('td', { class: 'sym', text: e.symbol }), el('td', { text: fixed(e.probability, 4) }))));
      parts.push(list);
    }
    $('next-note').textContent = `after position ${next.position} “${state.tokens[next.position]}”, temperature ${fixed(next.temperature, 2)}` +
      (next.top_k ? `, top ${next.top_k}` : '') + ': the 10 most likely symbols';
    $('next').replaceChildren(table, ...parts);
  }

  // ---- the chosen head: role scores and its trace -------------------------------------------
  function drawHeadDetail(trace) {
    const { layer: l, head: h } = state.head, r = headOf(l, h).roles || {};
    $('detail-title').textContent = `Head ${l}.${h}${r.role ? ': ' + r.role : ''}`;
    const rows = [['previous token', r.previous_token], [`best offset ${r.best_offset}`, r.best_offset_score],
      ['current token', r.current_token], ['first position', r.first_position], ['induction', r.induction],
      ['answer-finding', r.answer_finding], ['copy-forward', r.copy_forward]];
    for (const [kind, v] of Object.entries(r.answer_finding_by_kind || {})) rows.push([`answer-finding: ${kind}`, v]);
    const table = el('table', { class: 'numbers', id: 'detail-role-table' },
      el('tr', {}, el('th', { class: 'sym', text: 'role score' }), el('th', { text: 'value' })),
      ...rows.map(([name, v]) => el('tr', {}, el('td', { class: 'name', text: name }), el('td', { text: fixed(v, 3) }))));
    $('detail-roles').replaceChildren(el('p', { class: 'hint', text: `role scores over ${state.patterns.roles_texts || 'the text'}` }), table);
    const P = trace.position, scores = el('table', { class: 'numbers', id: 'trace-scores' },
      el('tr', {}, ...['s', 'key', 'q·k', '/√d', 'weight'].map((x, i) => el('th', { class: i === 1 ? 'sym' : '', text: x }))));
    for (let s = 0; s <= P; s++)
      scores.append(el('tr', {}, el('td', { text: s }), el('td', { class: 'sym', text: trace.tokens[s] }),
        el('td', { id: `trace-dot-${s}`, text: fixed(trace.dots[s], 4) }), el('td', { text: fixed(trace.scores[s], 4) }),
        el('td', { id: `trace-weight-${s}`, text: fixed(trace.weights[s], 4) })));
    const pushes = (list) => list.map((p) => `“${p.symbol}” ${signed(p.logit, 3)}`).join('  ');
    $('trace').replaceChildren(
      el('p', { text: `layer ${l}, head ${h}, query ${P} “${trace.tokens[P]}”: softmax(q·k / √${trace.d}) over keys 0..${P}, then Wo` }),
      scores,
      el('p', { text: `pushes up ${pushes(trace.top_up)}; down ${pushes(trace.top_down)}` }));
  }

  // ---- attribution and the logit lens ------------------------------------------------------
  function drawAttribution(a) {
    const scale = Math.max(1e-12, ...a.parts.map((p) => Math.abs(p.difference)));
    const table = el('table', { class: 'numbers', id: 'attribution-table' });
    a.parts.forEach((p, i) => table.append(el('tr', { id: `attr-part-${i}`, 'data-name': p.name, 'data-value': p.difference },
      el('td', { class: 'name', text: p.name }),
      el('td', {}, el('span', { class: 'bar', style: `width:${Math.round((60 * Math.abs(p.difference)) / scale)}px;background:${signedColour(p.difference, scale)}` })),
      el('td', { text: signed(p.difference, 4) }))));
    $('attribution-note').textContent = `position ${a.position}: answer “${a.answer}” against “${a.against}”, logit difference ` +
      `${signed(a.difference, 4)}; each part's share through ln_f with its scale frozen (direct logit attribution)`;
    $('attribution').replaceChildren(table);
  }

  function drawLens(lens) {
    const table = el('table', { class: 'numbers', id: 'lens-table' },
      el('tr', {}, el('th', { class: 'sym', text: 'stage' }), el('th', { text: `rank of “${lens.answer}”` }), el('th', { class: 'sym', text: 'top symbols' })));
    for (const s of lens.stages)
      table.append(el('tr', {}, el('td', { class: 'name', text: s.stage }), el('td', { text: s.answer_rank }),
        el('td', { class: 'sym', text: s.top.slice(0, 5).map((t) => `${t.symbol} ${fixed(t.logit, 2)}`).join('  ') })));
    $('lens').replaceChildren(table);
  }

  // ---- patching ------------------------------------------------------------------------------
  function drawPatch(p) {
    if (!p) {
      $('patch-heads').replaceChildren();
      sizeCanvas($('patch-canvas'), 1, 1);
      return;
    }
    if (p.error) {
      $('patch-note').textContent = `no patching: ${p.error}`;
      $('patch-heads').replaceChildren();
      return;
    }
    $('patch-note').textContent = `clean “${p.clean_tokens.join('')}”, corrupt “${p.corrupt_tokens.join('')}”; logit(${p.answer}) − logit(${p.against}): ` +
      `clean ${fixed(p.clean, 4)}, corrupt ${fixed(p.corrupt, 4)}; each value the share restored, (patched − corrupt) / (clean − corrupt)`;
    drawPatchingStreams($('patch-canvas'), p.clean_tokens, p.streams);
    // Each head: its whole output restored, and per position (the largest three).
    const table = el('table', { class: 'numbers', id: 'patch-table' }, el('tr', {}, el('th', { class: 'sym', text: 'head' }),
      el('th', { text: 'restored' }), el('th', { class: 'sym', text: 'by position (largest)' })));
    for (let l = 0; l < L; l++)
      for (let h = 0; h < H; h++) {
        const v = p.heads[l][h], byPos = p.head_positions[l][h];
        const best = byPos.map((x, t) => t).sort((a, b) => Math.abs(byPos[b]) - Math.abs(byPos[a])).slice(0, 3);
        table.append(el('tr', { id: `patch-head-${l}-${h}`, 'data-value': v },
          el('td', { class: 'name', text: `${l}.${h}` }),
          el('td', { style: `background:${signedColour(v, 1)}`, text: signed(v, 4) }),
          el('td', { class: 'sym', text: best.map((t) => `${t} ${p.clean_tokens[t]} ${signed(byPos[t], 3)}`).join('  ') })));
      }
    $('patch-heads').replaceChildren(table);
  }

  // ---- the probe set's roles (once per model) ----------------------------------------------
  function drawRoles() {
    if (!roles) {
      $('roles').replaceChildren(el('p', { class: 'hint', text: info.probe ? 'scoring…' :
        'no probe set: start serve with --probe FILE (or a checkpoint whose config names data.probe_path)' }));
      return;
    }
    const kinds = Object.keys(roles.probe_accuracy_by_kind || {});
    const header = el('tr', {}, ...['head', 'role', 'prev', 'ind', 'ans', 'copy', 'drop'].map((x) => el('th', { class: x === 'role' || x === 'head' ? 'sym' : '', text: x })),
      ...kinds.map((k) => el('th', { text: `ans ${k}` })), ...kinds.map((k) => el('th', { text: `drop ${k}` })));
    const table = el('table', { class: 'numbers', id: 'roles-table' }, header);
    for (const entry of roles.heads) {
      const r = entry.roles;
      table.append(el('tr', { id: `role-${entry.layer}-${entry.head}` },
        el('td', { class: 'name', text: `${entry.layer}.${entry.head}` }), el('td', { class: 'name', text: r.role }),
        el('td', { text: fixed(r.previous_token, 2) }), el('td', { text: fixed(r.induction, 2) }),
        el('td', { text: fixed(r.answer_finding, 2) }), el('td', { text: fixed(r.copy_forward, 2) }),
        el('td', { text: signed(r.accuracy_drop, 3) }),
        ...kinds.map((k) => el('td', { text: fixed((r.answer_finding_by_kind || {})[k], 2) })),
        ...kinds.map((k) => el('td', { text: signed((r.accuracy_drop_by_kind || {})[k], 3) }))));
    }
    const accuracy = kinds.map((k) => `${k} ${fixed(roles.probe_accuracy_by_kind[k], 3)}`).join(', ');
    $('roles').replaceChildren(el('p', { class: 'hint', text: `${roles.texts}; probe accuracy ${fixed(roles.probe_accuracy, 3)}` +
      (accuracy ? ` (${accuracy})` : '') + `; drop: accuracy lost with the head ${roles.ablation === 'mean' ? 'mean-ablated' : 'zeroed'}` }), table);
  }

  // ---- the watched run -------------------------------------------------------------------
  let runSeen = '';
  async function pollRun() {
    let run;
    try {
      run = await api('/api/run');
    } catch (e) {
      setTimeout(pollRun, 2000);
      return;
    }
    const m = run.model, c = run.curves;
    const note = $('reload-note');
    note.classList.toggle('error', m.reload_error !== '');
    note.textContent = m.reload_error ? m.reload_error
      : `serving step ${m.step} from ${m.source}` + (m.reloads ? ` (reloaded ${m.reloads} time${m.reloads > 1 ? 's' : ''} as the run wrote it)` : '') +
        (run.note ? ` · ${run.note}` : '');
    note.dataset.generation = m.generation;
    const key = `${c.lines}/${c.evals_total}/${c.skipped}`;
    if (key !== runSeen) {
      runSeen = key;
      const box = $('run');
      box.dataset.evals = c.evals_total;
      box.dataset.lines = c.lines;
      box.replaceChildren(...runCharts(c, run.floor), el('p', { class: 'hint', id: 'run-summary',
        text: `${run.dir}/metrics.jsonl: ${c.lines} lines, ${c.evals_total} evaluations` +
          (c.evals.length ? `; last: step ${c.evals[c.evals.length - 1].step}, val ${fixed(c.evals[c.evals.length - 1].val_loss, 4)}` : '') +
          (Number.isFinite(run.floor) ? ` (floor ${fixed(run.floor, 4)})` : '') }));
    }
    if (m.generation !== info.generation) await loadModel();  // a new checkpoint: new numbers everywhere
    setTimeout(pollRun, 1000);
  }

  // ---- the circuit of edges (/api/circuit), on request: the server takes up to a minute --------
  let edgeCircuit = null;
  function drawEdgeCircuit() {
    const select = $('edge-circuit-kind');
    if (!edgeCircuit) {
      $('edge-circuit').replaceChildren();
      select.disabled = true;
      return;
    }
    if (!select.options.length) select.replaceChildren(...edgeCircuit.kinds.map((k) => el('option', { value: k.kind, text: k.kind })));
    select.disabled = false;
    const { svg, note } = edgeCircuitGraph(edgeCircuit, select.value, null);
    $('edge-circuit').replaceChildren(svg);
    $('edge-circuit-note').textContent = note;
  }
  async function findEdgeCircuit() {
    $('edge-circuit-find').disabled = true;
    $('edge-circuit-note').textContent = 'finding the circuit on the probe set…';
    try {
      edgeCircuit = await api('/api/circuit');
      $('edge-circuit-kind').replaceChildren();
      drawEdgeCircuit();
    } catch (e) {
      $('edge-circuit-note').textContent = e.message;
    }
    $('edge-circuit-find').disabled = false;
  }

  // ---- start -------------------------------------------------------------------------------
  async function loadModel() {
    info = await api('/api/info');
    vocab = new Set(info.vocab);
    L = info.model.n_layer;
    H = info.model.n_head;
    const m = info.model;
    $('model-line').textContent = `model: ${m.n_layer} layers × ${m.n_head} heads, D = ${m.n_embd}, d = ${m.head_width}, ` +
      `block_size ${m.block_size}, ${m.vocab_size} symbols · step ${info.step} of ${info.source}` +
      (info.probe ? ` · probe ${info.probe}` : ' · no probe set');
    fillPickers();
    edgeCircuit = null;  // another model: its circuit is found again on request
    drawEdgeCircuit();
    $('edge-circuit-find').disabled = !info.probe;
    roles = null;
    drawRoles();
    if (info.probe) api('/api/roles').then((r) => { roles = r; drawRoles(); }).catch((e) => status(e.message));
    recompute();
  }

  async function start() {
    await loadModel();
    $('text').value = info.text;
    recompute.lastText = undefined;
    $('text').addEventListener('input', onInput);
    $('temperature').addEventListener('input', () => {
      $('temperature-value').textContent = Number($('temperature').value).toFixed(2);
      onInput();
    });
    for (const id of ['top-k', 'answer', 'against']) $(id).addEventListener('change', onInput);
    const patchChanged = () => {
      const position = $('patch-position').value;
      state.patch = position === '' ? null : { position: Number(position), symbol: $('patch-symbol').value };
      state.inputAt = performance.now();
      recompute();
    };
    $('patch-position').addEventListener('change', () => {
      const position = $('patch-position').value;
      // A replacement other than the symbol there, to start from.
      if (position !== '' && $('patch-symbol').value === state.tokens[Number(position)])
        $('patch-symbol').value = info.vocab.find((c) => c !== state.tokens[Number(position)]);
      patchChanged();
    });
    $('patch-symbol').addEventListener('change', patchChanged);
    $('edge-circuit-find').addEventListener('click', findEdgeCircuit);
    $('edge-circuit-kind').addEventListener('change', drawEdgeCircuit);
    $('patch-clear').addEventListener('click', () => { $('patch-position').value = ''; patchChanged(); });
    await recompute();
    if (info.run) {
      $('run-section').hidden = false;
      pollRun();
    }
    document.body.dataset.ready = '1';
  }
  start().catch((e) => status(`the page could not start: ${e.message}`));
}());
