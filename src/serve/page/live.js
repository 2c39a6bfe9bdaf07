// The live page's script (mini-gpt serve). It asks the server's /api/ endpoints, the JSON
// `inspect-heads --format json` prints, and draws the answers with the head explorer's
// drawing code (mgDraw, src/report/page/draw.js): no model arithmetic happens here.
// A text with a symbol outside the vocabulary, or longer than block_size, is marked, its
// views are cleared, and nothing is sent. After each update document.body.dataset.updates
// counts up and dataset.updateMs holds the time from the last keystroke (or click) to the
// drawn page. Every word comes from mgWords (src/report/page/words.js); the language switch
// redraws in place. Started with `serve --run` before the run's first checkpoint, the page
// shows the run's curves and waits (body.waiting) until the model is there.
'use strict';

(function () {
  const { CELL, STRIP_ROW, drawStripRow, fixed, signed, headColour, symbolLabel, el, sizeCanvas, heatmapImage, signedColour,
    runCharts, drawPatchingStreams, patchingLegend, fillKinds, edgeCircuitGraph } = mgDraw;
  const { t: words, kind, role, headName, serverError } = mgWords;
  const $ = (id) => document.getElementById(id);
  const DEBOUNCE_MS = 40;
  let info = null, vocab = new Set(), L = 0, H = 0;
  // The run this page follows (serve --run A --run B shows one page per run, /?run=I) and the
  // evaluation its views show (state.step: a step the run kept a model at, or null for the
  // model served now).
  const RUN = new URLSearchParams(location.search).get('run');
  const state = {
    tokens: [], query: 0, head: { layer: 0, head: 0 }, ablated: new Set(), patch: null, swapAt: null,
    seq: 0, drawn: 0, inputAt: performance.now(), patterns: null, answers: null, step: null,
  };
  const sym = symbolLabel;  // a symbol as every CLI text shows it: a newline as \n, a space as ␣
  let roles = null;  // /api/roles, once per model

  // ---- the server ------------------------------------------------------------------------
  // Every request names the page's run and, but for the run's status, the evaluation shown.
  async function api(path, params) {
    const query = new URLSearchParams();
    for (const [k, v] of Object.entries(params || {})) if (v !== undefined && v !== null && v !== '') query.set(k, v);
    if (RUN !== null) query.set('run', RUN);
    if (state.step !== null && path !== '/api/run') query.set('step', state.step);
    let response;
    try {
      response = await fetch(path + (query.toString() ? '?' + query : ''));
    } catch (e) {  // the server never answered (stopped, or the network): mgWords.serverError words it
      const error = new Error(e.message);
      error.network = true;
      throw error;
    }
    let body = null;
    try {
      body = await response.json();
    } catch (e) {  // not JSON (a proxy's page, say): serverError says so
      body = null;
    }
    if (!response.ok || body === null) {
      const error = new Error((body && body.error) || `HTTP ${response.status}`);
      error.status = response.status;  // 503: serve waits for the run's first checkpoint
      error.body = body || {};          // the server's "code" and its numbers (serve/api.cpp error_json)
      throw error;
    }
    return body;
  }
  // The status line; a function is kept and called again when the language is switched.
  let statusWords = null;
  const status = (text) => {
    statusWords = typeof text === 'function' ? text : null;
    $('status-line').textContent = (statusWords ? statusWords() : text) || '\u00a0';
  };
  const statusError = (e) => status(() => serverError(e));

  // ---- the text --------------------------------------------------------------------------
  // The symbols outside the vocabulary and the length, said in one line; null when it can be sent.
  function textProblem(symbols) {
    if (!symbols.length) return words('typeAText');
    const unknown = [];
    symbols.forEach((c, i) => { if (!vocab.has(c)) unknown.push(words('atPosition', sym(c), i)); });
    if (unknown.length)
      return words('notInVocab', vocab.size, unknown.slice(0, 8).join(', '), unknown.length > 8 ? unknown.length - 8 : 0) + words('nothingShown');
    if (symbols.length > info.model.block_size) return words('tooLong', symbols.length, info.model.block_size) + words('nothingShown');
    return null;
  }

  // A text the model cannot read: the text row, the strips and every number computed from
  // the last text are cleared, so that nothing on the page belongs to a text no longer there.
  function clearViews() {
    state.seq++;  // an answer still on its way for the old text is dropped
    state.answers = null;
    $('symbols').replaceChildren();
    $('strip-labels').replaceChildren();
    sizeCanvas($('strips'), 1, 1);
    $('readout').replaceChildren(el('p', { class: 'cleared', id: 'cleared-note', text: words('textCleared') }));
    for (const id of ['grid', 'next', 'detail-roles', 'trace', 'attribution', 'lens', 'patch-heads']) $(id).replaceChildren();
    for (const id of ['next-note', 'attribution-note']) $(id).textContent = '';
    $('swap-palette').hidden = true;
    drawPatch(null);
  }

  function onInput() {
    state.inputAt = performance.now();
    clearTimeout(onInput.timer);
    onInput.timer = setTimeout(recompute, DEBOUNCE_MS);
  }

  // The text row. A click makes a symbol the query or, with the click switched to
  // swapping, opens the palette of replacements for it: patching by a click in the text.
  function buildSymbols() {
    const row = $('symbols');
    row.replaceChildren(...state.tokens.map((c, s) => {
      const b = el('button', { type: 'button', id: 'sym-' + s, 'data-pos': s, title: words('positionTitle', s, sym(c)), text: sym(c) });
      b.addEventListener('click', () => {
        if ($('click-swap').checked) return openSwap(s);
        state.query = s;
        state.inputAt = performance.now();
        recompute();
      });
      return b;
    }));
    if (state.patch && state.patch.position < state.tokens.length) {
      const b = $('sym-' + state.patch.position);
      b.classList.add('patched');
      b.title = `${b.title} → ${sym(state.patch.symbol)}`;
    }
    if (state.swapAt !== null && state.swapAt < state.tokens.length) $('sym-' + state.swapAt).classList.add('swapping');
    $('sym-' + state.query).classList.add('query');
  }

  // The replacements for the symbol at S: the text's own symbols first (another name of the
  // story is the usual corruption), then the rest of the vocabulary; one click patches.
  function openSwap(s) {
    state.swapAt = s;
    document.querySelectorAll('#symbols .swapping').forEach((b) => b.classList.remove('swapping'));
    $('sym-' + s).classList.add('swapping');
    drawSwapPalette();
  }
  function drawSwapPalette() {
    const box = $('swap-palette'), s = state.swapAt;
    if (s === null || s >= state.tokens.length) {
      box.hidden = true;
      return;
    }
    const here = state.tokens[s], inText = new Set(state.tokens);
    const order = [...info.vocab.filter((c) => inText.has(c)), ...info.vocab.filter((c) => !inText.has(c))].filter((c) => c !== here);
    const palette = el('div', { class: 'palette', role: 'group' }, ...order.map((c) => {
      const b = el('button', { type: 'button', id: `swap-${info.vocab.indexOf(c)}`, 'data-symbol': c, class: inText.has(c) ? 'in-text' : '',
        title: sym(c), text: sym(c) });
      b.addEventListener('click', () => {
        state.patch = { position: s, symbol: c };
        state.swapAt = null;
        box.hidden = true;
        state.inputAt = performance.now();
        recompute();
      });
      return b;
    }));
    box.replaceChildren(el('p', { class: 'hint', text: words('swapPick', s, sym(here)) + ' (' + words('swapTextFirst') + ')' }), palette);
    box.hidden = false;
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
    if (problem) {
      clearViews();
      return;
    }
    state.tokens = symbols;
    state.query = Math.min(state.query, symbols.length - 1);
    if (recompute.lastText !== text) {
      state.query = symbols.length - 1;
      recompute.lastText = text;
      state.swapAt = null;
      $('swap-palette').hidden = true;
    }
    const seq = ++state.seq, P = state.query, { layer, head } = state.head, asked = state.step;
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
      corrupt ? api('/api/patch', { clean: text, corrupt }).catch((e) => ({ failed: e })) : null,
    ];
    let answers;
    try {
      answers = await Promise.all(asks);
    } catch (e) {
      if (seq === state.seq) statusError(e);
      return;
    }
    if (seq !== state.seq) return;  // a newer text is on its way
    state.answers = answers;
    drawAnswers();
    status('');
    state.drawn++;
    document.body.dataset.updateMs = (performance.now() - state.inputAt).toFixed(1);
    document.body.dataset.modelStep = asked === null ? 'latest' : String(asked);
    document.body.dataset.updates = String(state.drawn);
  }

  // Every view from the last answers (again, in the other language, after a switch).
  function drawAnswers() {
    if (!state.answers) return;
    const [patterns, next, ablatedNext, attribution, lens, trace, patch] = state.answers;
    state.patterns = patterns;
    buildSymbols();
    drawSwapPalette();
    drawStrips();
    drawGrid();
    drawReadout();
    drawNext(next, ablatedNext);
    drawHeadDetail(trace);
    drawAttribution(attribution);
    drawLens(lens);
    drawPatch(patch);
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
      return el('div', {}, el('span', { class: 'swatch', style: `background:${headColour(h)}` }), headName(l, h));
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
          el('td', { text: headName(l, h) }),
          el('td', { text: order.map((s) => `${sym(state.tokens[s])} (${s}) ${fixed(row[s], 7)}`).join('  ') })));
      }
    $('readout').replaceChildren(el('p', { class: 'hint', text: words('liveReadoutHint', t, sym(state.tokens[t])) }), table);
  }

  // A card opens its head wherever it is clicked; only its "zero it" button ablates. A
  // thumbnail is too small for symbol labels (84 / T pixels a symbol): hovering it names the
  // query and key symbols under the pointer below the grid.
  function drawGrid() {
    const grid = $('grid'), T = state.tokens.length;
    grid.style.gridTemplateColumns = `max-content repeat(${H}, max-content)`;
    const cells = [];
    for (let l = 0; l < L; l++) {
      cells.push(el('div', { class: 'hint', text: words('layerOption', l) }));
      for (let h = 0; h < H; h++) {
        const r = (headOf(l, h).roles || {});
        const canvas = el('canvas', { width: T, height: T, id: `heat-${l}-${h}`, style: 'width:84px;height:84px' });
        canvas.getContext('2d').putImageData(heatmapImage(canvas.getContext('2d'), T, triangle(l, h)), 0, 0);
        canvas.addEventListener('mousemove', (e) => {
          const b = canvas.getBoundingClientRect();
          const q = Math.floor(((e.clientY - b.top) / b.height) * T), k = Math.floor(((e.clientX - b.left) / b.width) * T);
          if (q < 0 || q >= T || k < 0 || k >= T) return;
          const qs = sym(state.tokens[q]), ks = sym(state.tokens[k]);
          $('grid-hover').textContent = k > q ? words('thumbMasked', headName(l, h), q, qs, k, ks)
            : words('thumbHover', headName(l, h), q, qs, k, ks, fixed(weightRow(l, h, q)[k], 4));
        });
        const key = `${l}.${h}`, on = state.ablated.has(key);
        const ablate = el('button', { type: 'button', class: 'ablate', id: `ablate-${l}-${h}`, 'aria-pressed': on ? 'true' : 'false',
          title: words('ablateTitle', headName(l, h)), text: on ? words('ablated') : words('ablate') });
        ablate.addEventListener('click', (e) => {
          e.stopPropagation();  // the card's own click opens the head
          toggleAblation(key);
        });
        const s = headOf(l, h).summary;
        const cell = el('div', { class: 'head-cell' + (on ? ' ablated' : '') + (state.head.layer === l && state.head.head === h ? ' chosen' : ''),
          id: `cell-${l}-${h}`, title: words('cardTitle', headName(l, h), role(r.role || '')) }, canvas, el('span', { class: 'cell-text' },
          el('span', { class: 'role', text: `${headName(l, h)} ${role(r.role || '')}` }),
          el('span', { class: 'hint importance', title: words('lossIfZeroedTitle'), text: words('lossIfZeroed', signed(s.importance, 3)) }), ablate));
        cell.addEventListener('click', () => chooseHead(l, h));
        cells.push(cell);
      }
    }
    grid.replaceChildren(...cells);
  }

  function chooseHead(l, h) {
    state.head = { layer: l, head: h };
    state.inputAt = performance.now();
    recompute();
  }
  function toggleAblation(key) {  // key: "L.H", as /api/next's ablate reads it
    if (state.ablated.has(key)) state.ablated.delete(key);
    else state.ablated.add(key);
    state.inputAt = performance.now();
    recompute();
  }

  // ---- the next symbol ---------------------------------------------------------------------
  function fillPickers() {
    for (const id of ['answer', 'against']) {
      const select = $(id), kept = select.value;
      select.replaceChildren(el('option', { value: '', text: words('modelsChoice') }),
        ...info.vocab.map((c) => el('option', { value: c, text: sym(c) })));
      select.value = kept;
    }
  }

  function drawNext(next, ablated) {
    const ablatedNames = ablated ? ablated.ablate.map((x) => { const [l, h] = x.split('.'); return headName(l, h); }).join(', ') : '';
    const header = el('tr', {}, el('th', { class: 'sym', text: words('symbol') }), el('th', { text: words('probability') }),
      el('th', { text: words('logit') }));
    if (ablated) header.append(el('th', { text: words('withAblated', ablatedNames) }));
    const table = el('table', { class: 'numbers', id: 'next-table' }, header);
    const ablatedBy = new Map((ablated ? ablated.top : []).map((e) => [e.symbol, e]));
    next.top.forEach((e, i) => {
      const row = el('tr', { id: `next-row-${i}`, 'data-symbol': e.symbol, 'data-probability': e.probability },
        el('td', { class: 'sym', text: sym(e.symbol) }),
        el('td', {}, el('span', { class: 'bar', style: `width:${Math.round(60 * e.probability)}px;background:#1f77b4` }), ' ' + fixed(e.probability, 4)),
        el('td', { text: fixed(e.logit, 3) }));
      if (ablated) {
        const a = ablatedBy.get(e.symbol);
        row.append(el('td', { class: 'ablated-probability', 'data-probability': a ? a.probability : '', text: a ? fixed(a.probability, 4) : words('notInTop') }));
      }
      table.append(row);
    });
    const parts = [el('p', { id: 'next-difference', 'data-difference': next.difference, 'data-ablated-difference': ablated ? ablated.difference : '',
      text: words('logitDiff', sym(next.answer.symbol), sym(next.against.symbol), signed(next.difference, 4)) +
        (ablated ? words('ablatedDiff', ablatedNames, signed(ablated.difference, 4)) : '') })];
    if (ablated) {
      const list = el('table', { class: 'numbers', id: 'next-ablated' }, el('tr', {}, el('th', { class: 'sym', text: words('ablatedSymbol') }), el('th', { text: words('probability') })));
      ablated.top.forEach((e, i) => list.append(el('tr', { id: `next-ablated-${i}`, 'data-symbol': e.symbol, 'data-probability': e.probability },
        el('td', { class: 'sym', text: sym(e.symbol) }), el('td', { text: fixed(e.probability, 4) }))));
      parts.push(list);
    }
    $('next-note').textContent = words('nextNote', next.position, sym(state.tokens[next.position]), fixed(next.temperature, 2), next.top_k);
    $('next').replaceChildren(table, ...parts);
  }

  // ---- the chosen head: role scores and its trace -------------------------------------------
  function drawHeadDetail(trace) {
    const { layer: l, head: h } = state.head, r = headOf(l, h).roles || {};
    $('detail-title').textContent = r.role ? words('headTitleOf', headName(l, h), role(r.role)) : `${words('headTitle')} ${headName(l, h)}`;
    const rows = [[words('scorePrev'), r.previous_token], [words('scoreOffset', r.best_offset), r.best_offset_score],
      [words('scoreCur'), r.current_token], [words('scoreFirst'), r.first_position], [words('scoreInduction'), r.induction],
      [words('scoreAnswer'), r.answer_finding], [words('scoreCopy'), r.copy_forward]];
    for (const [k, v] of Object.entries(r.answer_finding_by_kind || {})) rows.push([words('scoreAnswerKind', kind(k)), v]);
    const table = el('table', { class: 'numbers', id: 'detail-role-table' },
      el('tr', {}, el('th', { class: 'sym', text: words('roleScore') }), el('th', { text: words('value') })),
      ...rows.map(([name, v]) => el('tr', {}, el('td', { class: 'name', text: name }), el('td', { text: fixed(v, 3) }))));
    const pt = state.patterns;
    $('detail-roles').replaceChildren(el('p', { class: 'hint', id: 'detail-roles-texts',
      text: words('rolesOver', mgWords.rolesTexts(pt.roles_texts_source, pt.roles_text_count, pt.roles_texts_probe, pt.roles_texts) || words('theText')) }), table);
    const P = trace.position, scores = el('table', { class: 'numbers', id: 'trace-scores' },
      el('tr', {}, ...['s', words('keyCol'), 'q·k', '/√d', 'weight'].map((x, i) => el('th', { class: i === 1 ? 'sym' : '', text: x }))));
    for (let s = 0; s <= P; s++)
      scores.append(el('tr', {}, el('td', { text: s }), el('td', { class: 'sym', text: sym(trace.tokens[s]) }),
        el('td', { id: `trace-dot-${s}`, text: fixed(trace.dots[s], 4) }), el('td', { text: fixed(trace.scores[s], 4) }),
        el('td', { id: `trace-weight-${s}`, text: fixed(trace.weights[s], 4) })));
    const pushes = (list) => list.map((p) => `“${sym(p.symbol)}” ${signed(p.logit, 3)}`).join('  ');
    $('trace').replaceChildren(
      el('p', { id: 'trace-title', text: words('liveTraceTitle', headName(l, h), P, sym(trace.tokens[P]), trace.d) }),
      scores,
      el('p', { text: words('pushes', pushes(trace.top_up), pushes(trace.top_down)) }));
  }

  // ---- attribution and the logit lens ------------------------------------------------------
  function drawAttribution(a) {
    const scale = Math.max(1e-12, ...a.parts.map((p) => Math.abs(p.difference)));
    const table = el('table', { class: 'numbers', id: 'attribution-table' });
    a.parts.forEach((p, i) => table.append(el('tr', { id: `attr-part-${i}`, 'data-name': p.name, 'data-value': p.difference },
      el('td', { class: 'name', text: mgWords.part(p) }),
      el('td', {}, el('span', { class: 'bar', style: `width:${Math.round((60 * Math.abs(p.difference)) / scale)}px;background:${signedColour(p.difference, scale)}` })),
      el('td', { text: signed(p.difference, 4) }))));
    $('attribution-note').textContent = words('liveAttributionNote', a.position, sym(a.answer), sym(a.against), signed(a.difference, 4));
    $('attribution').replaceChildren(table);
  }

  function drawLens(lens) {
    const table = el('table', { class: 'numbers', id: 'lens-table' },
      el('tr', {}, el('th', { class: 'sym', text: words('stage') }), el('th', { text: words('rankOf', sym(lens.answer)) }),
        el('th', { class: 'sym', text: words('topSymbols') })));
    for (const s of lens.stages)
      table.append(el('tr', {}, el('td', { class: 'name', 'data-stage': s.stage, text: mgWords.stage(s) }), el('td', { text: s.answer_rank }),
        el('td', { class: 'sym', text: s.top.slice(0, 5).map((t) => `${sym(t.symbol)} ${fixed(t.logit, 2)}`).join('  ') })));
    $('lens').replaceChildren(table);
  }

  // ---- patching ------------------------------------------------------------------------------
  function drawPatch(p) {
    const warning = $('patch-warning');
    warning.hidden = true;
    if (!p) {
      $('patch-heads').replaceChildren();
      $('patch-legend-box').replaceChildren();
      $('patch-note').textContent = words('patchHint');
      sizeCanvas($('patch-canvas'), 1, 1);
      return;
    }
    if (p.failed) {
      $('patch-note').textContent = words('noPatching', serverError(p.failed));
      $('patch-heads').replaceChildren();
      return;
    }
    $('patch-note').textContent = words('livePatchNote', p.clean_tokens.map(sym).join(''), p.corrupt_tokens.map(sym).join(''),
      sym(p.answer), sym(p.against), fixed(p.clean, 4), fixed(p.corrupt, 4));
    // The clean and corrupt differences too close for a share (interp/patching.h's kMinPatchingGap).
    if (p.warning) {
      warning.hidden = false;
      warning.textContent = words('gapWarning', fixed(p.clean, 4), fixed(p.corrupt, 4), fixed(Math.abs(p.gap), 4), p.min_gap);
    }
    drawPatchingStreams($('patch-canvas'), p.clean_tokens.map(sym), p.streams);
    $('patch-legend-box').replaceChildren(patchingLegend('patch-legend'));
    // Each head: its whole output restored, and per position (the largest three).
    const table = el('table', { class: 'numbers', id: 'patch-table' }, el('tr', {}, el('th', { class: 'sym', text: words('headCol') }),
      el('th', { text: words('restored') }), el('th', { class: 'sym', text: words('byPosition') })));
    for (let l = 0; l < L; l++)
      for (let h = 0; h < H; h++) {
        const v = p.heads[l][h], byPos = p.head_positions[l][h];
        const best = byPos.map((x, t) => t).sort((a, b) => Math.abs(byPos[b]) - Math.abs(byPos[a])).slice(0, 3);
        table.append(el('tr', { id: `patch-head-${l}-${h}`, 'data-value': v },
          el('td', { class: 'name', text: headName(l, h) }),
          el('td', { style: `background:${signedColour(v, 1)}`, text: signed(v, 4) }),
          el('td', { class: 'sym', text: best.map((t) => `${t} ${sym(p.clean_tokens[t])} ${signed(byPos[t], 3)}`).join('  ') })));
      }
    $('patch-heads').replaceChildren(table);
  }

  // ---- the probe set's roles (once per model) ----------------------------------------------
  function drawRoles() {
    if (!roles) {
      $('roles').replaceChildren(el('p', { class: 'hint', text: info.probe ? words('scoring') : words('noProbeServe') }));
      return;
    }
    const kinds = Object.keys(roles.probe_accuracy_by_kind || {});
    const header = el('tr', {}, ...words('rolesCols').map((x, i) => el('th', { class: i < 2 ? 'sym' : '', text: x })),
      ...kinds.map((k) => el('th', { text: words('ansKind', kind(k)) })), ...kinds.map((k) => el('th', { text: words('dropKind', kind(k)) })));
    const table = el('table', { class: 'numbers', id: 'roles-table' }, header);
    for (const entry of roles.heads) {
      const r = entry.roles;
      table.append(el('tr', { id: `role-${entry.layer}-${entry.head}` },
        el('td', { class: 'name', text: headName(entry.layer, entry.head) }), el('td', { class: 'name', text: role(r.role) }),
        el('td', { text: fixed(r.previous_token, 2) }), el('td', { text: fixed(r.induction, 2) }),
        el('td', { text: fixed(r.answer_finding, 2) }), el('td', { text: fixed(r.copy_forward, 2) }),
        el('td', { text: signed(r.accuracy_drop, 3) }),
        ...kinds.map((k) => el('td', { text: fixed((r.answer_finding_by_kind || {})[k], 2) })),
        ...kinds.map((k) => el('td', { text: signed((r.accuracy_drop_by_kind || {})[k], 3) }))));
    }
    const accuracy = kinds.map((k) => `${kind(k)} ${fixed(roles.probe_accuracy_by_kind[k], 3)}`).join(', ');
    $('roles').replaceChildren(el('p', { class: 'hint', id: 'roles-hint', text: words('rolesHint', mgWords.rolesTexts(roles.texts_source, roles.text_count, roles.texts_probe, roles.texts), fixed(roles.probe_accuracy, 3), accuracy, roles.ablation === 'mean') }), table);
  }

  // ---- the watched run -------------------------------------------------------------------
  let runSeen = '', lastRun = null;
  function drawRunNote(run) {
    const m = run.model, note = $('reload-note');
    note.classList.toggle('error', m.reload_error !== '');
    note.textContent = m.reload_error ? words('reloadFailed', m.reload_error) : m.generation === 0 ? words('waitingModel') : words('serving', m.step, m.source, m.reloads, mgWords.runNote(run.note));
    note.dataset.generation = m.generation;
  }
  function drawRunCharts(run) {
    const c = run.curves, box = $('run'), last = c.evals.length ? c.evals[c.evals.length - 1] : null;
    box.dataset.evals = c.evals_total;
    box.dataset.lines = c.lines;
    box.replaceChildren(...runCharts(c, run.floor), el('p', { class: 'hint', id: 'run-summary',
      text: words('runSummary', run.dir, c.lines, c.evals_total, last && { step: last.step, val: fixed(last.val_loss, 4) },
        Number.isFinite(run.floor) ? fixed(run.floor, 4) : null) }));
  }
  async function pollRun() {
    let run;
    try {
      run = await api('/api/run');
    } catch (e) {  // said on the status line until the server answers again
      statusError(e);
      pollRun.failing = true;
      setTimeout(pollRun, 2000);
      return;
    }
    if (pollRun.failing) {
      pollRun.failing = false;
      status(document.body.dataset.waiting ? () => words('waitingModel') : '');
    }
    lastRun = run;
    const m = run.model, c = run.curves;
    drawRunNote(run);
    const key = `${c.lines}/${c.evals_total}/${c.skipped}`;
    if (key !== runSeen) {
      runSeen = key;
      drawRunCharts(run);
    }
    updateReplay(run);
    // A new checkpoint (the first one, when serve waited for it): new numbers everywhere,
    // unless the page shows a kept evaluation (the slider's).
    if (state.step === null && m.generation !== 0 && (!info || m.generation !== info.generation)) {
      try {
        await (info ? loadModel() : startWithModel());
      } catch (e) {
        status(() => words('couldNotStart', serverError(e)));
      }
    }
    setTimeout(pollRun, 1000);
  }

  // ---- the replay: a slider over the evaluations the run kept, its events, the chain ----------
  // The slider, its marks and the curves under it are mgDraw's (drawReplay), the explorer's too.
  const replay = { steps: [], events: [], evals: [], key: '' };
  const shownIndex = () => (state.step === null ? replay.steps.length - 1 : replay.steps.indexOf(state.step));

  function updateReplay(run) {
    const steps = Array.isArray(run.eval_models) ? run.eval_models : [];
    const events = Array.isArray(run.events) ? run.events : [];
    const key = `${steps.join(',')}/${events.length}/${run.curves.evals_total}`;
    if (!steps.length || key === replay.key) return;
    replay.key = key;
    replay.steps = steps;
    replay.events = events;
    replay.evals = run.curves.evals || [];
    $('replay-section').hidden = false;
    const slider = $('step-slider');
    slider.max = String(steps.length - 1);
    if (state.step === null) slider.value = String(steps.length - 1);
    drawReplay();
  }
  const drawReplay = () => mgDraw.drawReplay(replay, shownIndex(), chooseIndex);

  function chooseIndex(i) {
    $('step-slider').value = String(i);
    setStep(replay.steps[i]);
  }

  async function setStep(step) {
    state.step = step;
    state.inputAt = performance.now();
    mgDraw.drawStepCurves(replay, shownIndex());
    await loadModel();
  }

  async function drawChain() {
    const box = $('chain'), asked = state.step;
    if (!info.probe) {
      box.replaceChildren(el('p', { class: 'hint', text: words('replayNoChain') }));
      return;
    }
    box.replaceChildren(el('p', { class: 'hint', text: words('replayFinding') }));
    let chain;
    try {
      chain = await api('/api/explain');
    } catch (e) {
      box.replaceChildren(el('p', { class: 'hint', text: serverError(e) }));
      return;
    }
    if (asked !== state.step) return;  // the slider has moved on
    const table = el('table', { class: 'numbers', id: 'chain-table', 'data-step': asked === null ? 'latest' : asked },
      el('tr', {}, ...words('replayChainHeader').map((x, i) => el('th', { class: i === 0 ? 'sym' : '', text: x }))));
    for (const k of chain.kinds)
      table.append(el('tr', { id: `chain-${k.kind}`, 'data-writer': k.writer || '', 'data-carrier': k.carrier || '' },
        el('td', { class: 'name', text: kind(k.kind) }), el('td', { text: fixed(k.accuracy, 3) }),
        el('td', { text: k.writer || '–' }),
        el('td', { text: k.carrier ? `${k.carrier} (${k.composition})` : '–' }),
        el('td', { text: words('replayLearned', k.learned, k.shortcut) })));
    box.replaceChildren(table);
  }

  // ---- the circuit of edges (/api/circuit), on request: the server takes up to a minute --------
  let edgeCircuit = null;
  let edgeCircuitSays = () => words('liveEdgeCircuitHint');  // the note while none is drawn
  function drawEdgeCircuit() {
    const select = $('edge-circuit-kind');
    if (!edgeCircuit) {
      $('edge-circuit').replaceChildren();
      $('edge-circuit-note').textContent = edgeCircuitSays();
      select.disabled = true;
      return;
    }
    fillKinds(select, edgeCircuit.kinds);
    select.disabled = false;
    const { svg, note } = edgeCircuitGraph(edgeCircuit, select.value, null);
    $('edge-circuit').replaceChildren(svg);
    $('edge-circuit-note').textContent = note;
  }
  async function findEdgeCircuit() {
    const model = info;
    $('edge-circuit-find').disabled = true;
    edgeCircuit = null;
    edgeCircuitSays = () => words('edgeCircuitFinding');
    drawEdgeCircuit();
    try {
      const found = await api('/api/circuit');
      if (info !== model) return;  // another model since: its circuit is found on request
      edgeCircuit = found;
    } catch (e) {
      if (info !== model) return;
      edgeCircuitSays = () => serverError(e);
    }
    drawEdgeCircuit();
    $('edge-circuit-find').disabled = false;
  }

  // ---- start -------------------------------------------------------------------------------
  function drawModelLine() {
    if (info) $('model-line').textContent = words('liveModelLine', info.model, info.step, info.source, info.probe);
  }
  function drawStepLabel() {
    if (info) $('step-label').textContent = state.step === null ? words('replayLatest', info.step) : words('replayKept', info.step, info.source);
  }
  async function loadModel() {
    info = await api('/api/info');
    vocab = new Set(info.vocab);
    L = info.model.n_layer;
    H = info.model.n_head;
    drawModelLine();
    drawStepLabel();
    if (info.run) drawChain();
    fillPickers();
    edgeCircuit = null;  // another model: its circuit is found again on request
    edgeCircuitSays = () => words('liveEdgeCircuitHint');
    drawEdgeCircuit();
    $('edge-circuit-find').disabled = !info.probe;
    roles = null;
    drawRoles();
    if (info.probe) api('/api/roles').then((r) => { roles = r; drawRoles(); }).catch((e) => statusError(e));
    recompute();
  }

  // ---- the language ------------------------------------------------------------------------
  function redrawWords() {
    mgWords.applyStatic();
    document.title = words('liveTitle');
    mgWords.drawGlossary($('glossary-section'), el);
    drawModelLine();
    if (info) {
      fillPickers();
      drawRoles();
      drawStepLabel();
      if (info.run) drawChain();  // its table's words (the chain is computed once per model)
      drawEdgeCircuit();  // its labels and note (the circuit is kept as found)
      const problem = textProblem(Array.from($('text').value));
      if (problem) {
        $('oov-line').textContent = problem;
        clearViews();
      } else {
        drawAnswers();
      }
    }
    if (statusWords) status(statusWords);
    if (lastRun) {
      drawRunNote(lastRun);
      drawRunCharts(lastRun);
    }
    if (replay.steps.length) drawReplay();
  }

  // ---- start -------------------------------------------------------------------------------
  function bindControls() {
    // The replay's slider (shown once the watched run has kept a model).
    $('step-slider').addEventListener('input', () => {
      clearTimeout(setStep.timer);
      const i = Number($('step-slider').value);
      setStep.timer = setTimeout(() => setStep(replay.steps[i]), DEBOUNCE_MS);
    });
    $('step-latest').addEventListener('click', () => {
      $('step-slider').value = String(replay.steps.length - 1);
      setStep(null);
    });
    window.addEventListener('resize', () => { if (replay.steps.length) drawReplay(); });
    $('text').addEventListener('input', onInput);
    $('temperature').addEventListener('input', () => {
      $('temperature-value').textContent = Number($('temperature').value).toFixed(2);
      onInput();
    });
    for (const id of ['top-k', 'answer', 'against']) $(id).addEventListener('change', onInput);
    const setMode = () => {
      document.body.classList.toggle('swap-mode', $('click-swap').checked);
      if (!$('click-swap').checked) {
        state.swapAt = null;
        document.querySelectorAll('#symbols .swapping').forEach((b) => b.classList.remove('swapping'));
        $('swap-palette').hidden = true;
      }
    };
    $('click-query').addEventListener('change', setMode);
    $('click-swap').addEventListener('change', setMode);
    $('patch-clear').addEventListener('click', () => {
      state.patch = null;
      state.swapAt = null;
      state.inputAt = performance.now();
      recompute();
    });
    $('edge-circuit-find').addEventListener('click', findEdgeCircuit);
    $('edge-circuit-kind').addEventListener('change', drawEdgeCircuit);
  }
  // The model is there: the page's first text, the views, then readiness.
  async function startWithModel() {
    await loadModel();
    document.body.classList.remove('waiting');
    delete document.body.dataset.waiting;
    $('text').value = info.text;
    recompute.lastText = undefined;
    await recompute();
    document.body.dataset.ready = '1';
  }
  async function start() {
    mgWords.applyStatic();
    document.title = words('liveTitle');
    mgWords.bindSwitch($('lang-switch'), redrawWords);
    mgWords.drawGlossary($('glossary-section'), el);
    bindControls();
    drawPatch(null);
    try {
      await startWithModel();
    } catch (e) {
      if (e.status !== 503) throw e;
      // serve --run beside a run that has written no checkpoint yet: its curves meanwhile.
      document.body.classList.add('waiting');
      document.body.dataset.waiting = '1';
      status(() => words('waitingModel'));
      $('run-section').hidden = false;
      pollRun();
      return;
    }
    if (info.run) {
      $('run-section').hidden = false;
      pollRun();
    }
  }
  start().catch((e) => status(() => words('couldNotStart', serverError(e))));
}());
