// The words of mini-gpt's two pages, the head explorer and the live page of `mini-gpt serve`:
// one table per language (en, zh), every label, hint, role name, legend and error either
// page shows. A value is a string or a function of the numbers it shows. A key missing
// from zh falls back to en (a page is never blank), and tests/explorer_browser_test.py
// checks that none is missing. The first language follows the browser (navigator.language);
// the switch in each page's header remembers the choice (localStorage "mini-gpt.lang").
// The same vocabulary, with how each number is computed, is docs/glossary.md.
// Loaded before draw.js; its names are the fields of mgWords.
'use strict';

const mgWords = (function () {
  // The question each kind of probe item asks (corpus v5: who, colour, what; v6 adds
  // holder and which_colour), as lesson 12 asks it.
  const QUESTION = { who: '谁的', colour: '什么颜色…', what: '有什么…', holder: '谁拿着', which_colour: '什么颜色' };
  // A head's role names (interp/roles.cpp's role_name), the English ones as the CLI prints them.
  const ROLE_ZH = { writer: '写答案', carrier: '带线索', induction: '归纳', 'previous-token': '读前一字',
    'current-token': '读本字', 'first-position': '读位置0', mixed: '混合' };

  const en = {
    langName: 'English',
    langLabel: 'language',
    explorerTitle: 'mini-gpt head explorer',
    liveTitle: 'mini-gpt live',
    glossaryLink: 'glossary',
    glossaryTitle: 'Glossary: the lesson’s words and the program’s',
    glossaryIntro: 'Each term as lesson 12 says it and as mini-gpt names it, with how mini-gpt computes it (docs/glossary.md holds the same).',
    // The model line and the probe line.
    positionType: (p) => (p === 'rope' ? 'RoPE positions (rotary, on q and k)' : p === 'learned' ? 'learned positions' : `${p} positions`),
    modelLine: (m, pos) => `model: ${m.n_layer} layers × ${m.n_head} heads, D = ${m.n_embd}, d = ${m.head_width}, block_size ${m.block_size}, ${m.vocab_size} symbols, ${pos}`,
    textOf: (n) => `text of ${n} symbols`,
    lossOnText: (x) => `loss on the text ${x} nats/symbol`,
    probeLine: (probe, acc, mean, texts) => `probe: ${probe} · accuracy ${acc} · “probe drop if zeroed” = probe accuracy lost with the head ${mean ? 'mean-ablated' : 'zeroed'} · role scores over ${texts}`,
    noProbeLine: (texts) => `no probe: role scores over ${texts}; no probe drop (give --probe FILE)`,
    // The text row and the strips.
    textTitle: 'Which keys each head reads',
    layerLabel: 'layer',
    layerOption: (l) => `layer ${l}`,
    textHint: 'Hover, click or focus a query symbol; ← → Home End move it, Enter pins it.',
    queryToolbar: 'query symbol',
    stripsLabel: 'attention weights of the chosen query, one row per head',
    positionTitle: (s, sym) => `position ${s}: ${sym}`,
    masked: (s, sym, t) => `key ${s} ${sym} comes after query ${t}: masked, weight 0`,
    queryToKey: (t, ts, s, ss) => `query ${t} ${ts} → key ${s} ${ss}`,
    allWeights: (n) => `all ${n} weights`,
    readoutHint: (t, sym, pinned, l) => `query ${t} ${sym}${pinned ? ' (pinned)' : ''}, layer ${l}: each head’s three largest weights (projected_weights); every row sums to 1`,
    liveReadoutHint: (t, sym) => `query ${t} ${sym}: each head’s three largest weights (projected_weights); every row sums to 1`,
    // The grid.
    gridTitle: 'All heads',
    gridHint: 'Each heatmap is a head’s projected_weights (row: query symbol, column: key symbol; hover for both); click a card to open the head.',
    liveGridTitle: 'Every head',
    liveGridHint: 'Each heatmap is a head’s projected_weights (row: query symbol, column: key symbol; hover for both). Click a card to open the head; the “zero it” button ablates it.',
    cardTitle: (name, role) => `${name}: ${role}; click to open`,
    thumbHover: (name, t, ts, s, ss, w) => `${name}: query ${t} ${ts} → key ${s} ${ss}: ${w}`,
    thumbMasked: (name, t, ts, s, ss) => `${name}: query ${t} ${ts}, key ${s} ${ss}: masked`,
    cardScores1: (prev, cur) => `prev ${prev} · cur ${cur}`,
    cardScores2: (first, ind) => `first ${first} · ind ${ind}`,
    cardScores3: (ans, copy) => `ans ${ans} · copy ${copy}`,
    probeDrop: (x) => `probe drop if zeroed ${x}`,
    probeDropTitle: 'probe drop if zeroed: the probe set’s accuracy lost when this head’s output is zeroed (ablation), over every probe question',
    noProbeDrop: 'no probe',
    lossIfZeroed: (x) => `loss if zeroed ${x}`,
    lossIfZeroedTitle: 'loss if zeroed: how much the loss on this text rises, in nats/symbol, when this head’s output is zeroed (on this text only, not the probe set)',
    ablate: 'zero it',
    ablated: 'zeroed',
    ablateTitle: (name) => `zero ${name}’s output (ablation) and show the next symbol without it`,
    // Role scores.
    roleLabel: (r) => `role: ${r}`,
    roleScore: 'role score',
    value: 'value',
    namesRoleAt: (x) => `names the role at ≥ ${x}`,
    scorePrev: 'previous token',
    scoreOffset: (k) => `best offset ${k}`,
    scoreCur: 'current token',
    scoreFirst: 'first position',
    scoreInduction: 'induction',
    scoreAnswer: 'answer-finding (writer’s pattern)',
    scoreCopy: 'copy-forward (carrier’s pattern)',
    scoreAnswerKind: (k) => `answer-finding: ${k}`,
    scoreCopyKind: (k) => `copy-forward: ${k}`,
    noProbeNoDrop: 'no probe: no probe drop',
    probeDropLine: (from, to, drop, how, byKind) => `probe drop if zeroed: probe accuracy ${from} → ${to} (drop ${drop}, ${how} ablation)${byKind ? '; by kind: ' + byKind : ''}`,
    onThisText: (e, off, share, first, imp) => `on this text: entropy ${e} nats · reads offset ${off} most (${share}%) · on position 0 ${first} · loss if zeroed (loss with the head zeroed − loss) ${imp} nats`,
    detailHint: 'Hover the heatmap (or focus it and use the arrow keys) for a weight; click a row (Enter) to make it the query.',
    headTitle: 'Head',
    headTitleOf: (name, role) => `Head ${name}: ${role}`,
    detailCanvas: 'the head’s weights, large, with the symbols on its rows (query) and columns (key)',
    detailMasked: (t, ts, s, ss) => `query ${t} ${ts}, key ${s} ${ss}: masked`,
    detailCell: (name, t, ts, s, ss, w) => `${name}: query ${t} ${ts} → key ${s} ${ss}: ${w}`,
    rolesOver: (x) => `role scores over ${x}`,
    theText: 'the text',
    // The worked trace.
    workedTrace: 'Worked trace',
    queryPosition: 'query position',
    tracesEvery: (n) => `traces at every position (${n})`,
    tracesOnly: (list, budget) => `traces at positions ${list} only (layers × heads × T is over ${budget}; inspect-heads --position P adds one)`,
    noTraceAt: (p) => `no trace at position ${p}`,
    traceKeys: (n) => `the ${n} keys`,
    traceValues: (n) => `the ${n} values`,
    keyCol: 'key',
    forwardPass: '(forward pass)',
    traceTitle: (name, P, sym, D, d, h) => `${name}, query position ${P} “${sym}”: D = ${D}, d = ${d}; the head reads rows ${h * d}..${h * d + d - 1} of Wq, Wk, Wv and columns ${h * d}..${h * d + d - 1} of Wo. head output = softmax(q kᵀ / √d + causal mask) v, then Wo onto the residual stream.`,
    traceX: (P, l, D) => `x_t = LayerNorm(residual stream at ${P}; blocks.${l}.ln1) [D = ${D}] `,
    traceQ: (d) => `q_t = x_t Wq_hᵀ [d = ${d}] `,
    traceRope: (P) => `after RoPE at position ${P}: `,
    traceLearned: 'learned positions: no rotation',
    traceK: (P) => `keys k_s = x_s Wk_hᵀ for s = 0..${P}`,
    traceScores1: 'q·k_s, divided by √d (times ',
    traceScores2: '), the causal mask, and the softmax: row ',
    traceScores3: ' of projected_weights',
    traceV: 'values v_s = x_s Wv_hᵀ',
    traceOut: 'head output = Σ_s weight_s v_s ',
    traceWo: (P) => `the head’s slice of Wo applied: its contribution to the residual stream at ${P} [D] `,
    tracePush: (sigma) => `output symbols it pushes (direct logit attribution, an approximation: centred, divided by the final stream’s σ ${sigma}, times ln_f.weight, through the vocabulary head; later blocks ignored): up`,
    down: 'down',
    liveTraceTitle: (name, P, sym, d) => `${name}, query ${P} “${sym}”: softmax(q·k / √${d}) over keys 0..${P}, then Wo`,
    pushes: (up, down) => `pushes up ${up}; down ${down}`,
    liveTraceHeading: 'Worked trace at the query position',
    // Circuits in the symbol basis.
    circuitsTitle: 'Circuits in the symbol basis',
    notDrawn: (reason) => `not drawn: ${reason}`,
    querySymbol: 'query symbol',
    keySymbol: 'key symbol',
    attendedSymbol: 'attended symbol',
    outputSymbol: 'output symbol',
    circuitHover: (name, rn, a, cn, b, v) => `${name}: ${rn} “${a}”, ${cn} “${b}”: ≈ ${v} (8-bit, for drawing)`,
    circuitPanel: (rn, cn, max) => ` (rows: ${rn}, columns: ${cn}; red > 0 > blue, ±${max})`,
    copyScore: (c, pct) => `OV copy score ${c} (Σλ / Σ|λ|: 1 copies, −1 suppresses) · symbols whose own logit tops their OV row: ${pct}%`,
    circuitsHint: 'Through each symbol’s embedding and this block’s ln1: exact for layer 0 at offset 0; later layers leave out the earlier blocks, and OV treats ln_f as linear.',
    // The circuit section.
    circuitSection: 'The circuit: which heads write the answer, and which heads they read',
    attributionTitle: 'Direct logit attribution at the query',
    attributionNote: (P, sym, none, a, b, diff) => `position ${P} ${sym}${none ? ' (the query has no precomputed attribution)' : ''}: answer ${a} against ${b}, logit difference ${diff}; each part through ln_f with its scale frozen from the whole stream (direct logit attribution, as TransformerLens computes it)`,
    liveAttributionNote: (P, a, b, diff) => `position ${P}: answer “${a}” against “${b}”, logit difference ${diff}; each part’s share through ln_f with its scale frozen (direct logit attribution)`,
    liveCircuitTitle: 'Attribution and the logit lens at the query position',
    lensTitle: 'Logit lens',
    stage: 'stage',
    rankOf: (a) => `rank of “${a}”`,
    topSymbols: 'top symbols',
    patchingTitle: 'Activation patching',
    noPatchingHere: (reason) => `no patching on this page: ${reason}`,
    patchingNote: (corrupt, a, b, clean, cor) => `the corrupted partner ${corrupt} ; logit difference ${a} − ${b}: clean ${clean}, corrupt ${cor}; each square the share restored, (patched − corrupt) / (clean − corrupt), with the clean stream (resid_pre) entering that layer at that position`,
    patchingCanvas: 'share restored, one row per layer, one column per position',
    patchingHover: (l, t, sym, v) => `layer ${l}, position ${t} ${sym}: restored ${v}`,
    headCol: 'head',
    restoredCol: 'restored (its output, hook_z, from the clean run)',
    restored: 'restored',
    byPosition: 'by position (largest)',
    legendLow: '−1: pushes toward the corrupt answer',
    legendZero: '0: no change',
    legendHigh: '+1: the clean difference restored',
    negativeShare: 'A negative share: putting back that activation alone moves the difference further toward the corrupt answer than the corrupt run itself; it works against the rest of the clean run (a head that suppresses what the others write, for instance).',
    gapWarning: (clean, corrupt, gap, min) => `warning: the clean and corrupt differences (${clean}, ${corrupt}) are only ${gap} apart, under ${min}: too close to measure a share restored; every share below divides by that gap.`,
    chainTitle: 'The chain, per question kind',
    chainHint: 'Found on the probe set as inspect-heads --explain finds it: the writer, the head with the largest direct logit attribution at the answer; the carrier, the earlier head the writer reads through its queries or keys (Q-/K-composition), among those that restore the answer when the fact’s key is swapped. Both are ringed in the graph.',
    kindLabel: 'kind',
    noChain: 'no probe set: the chain is found on one (inspect-heads --html ... --probe FILE)',
    shortcut: (cue, no, with_) => ` — learned by a shortcut: the ${cue || 'cue'} alone (${no} without distractors, ${with_} with them); the heads that answer it:`,
    notLearned: ' — not learned (under 0.9); the best candidates:',
    chainAccuracy: (kind, acc, items, status) => `${kind}: accuracy ${acc} on ${items} probe items${status}. `,
    chainWriter: (w, attr, diff, rest) => `Writer ${w}: direct logit attribution ${attr} of the difference ${diff}, restores ${rest} with the answer swapped. `,
    chainCarrier: (c, rest, w, keys, mode, score, base) => `Carrier ${c}: restores ${rest} with the key swapped; ${w} reads it through its ${keys ? 'keys' : 'queries'} (${mode}-composition ${score}, baseline ${base}). `,
    noCarrier: 'No carrier: no earlier head both restores with the key swapped and is read by the writer. ',
    chainMlps: (x) => `The MLPs: ${x}.`,
    graphTitle: 'Composition graph',
    graphLabel: 'composition graph',
    graphLayer: (l) => `layer ${l}`,
    edgeTitle: (w, r, mode, s, ratio, q, k, v) => `${w} → ${r}: ${mode}-composition ${s} (${ratio} × baseline); Q ${q} K ${k} V ${v}`,
    graphNote: (n, q, k, v) => `${n} edges: composition at least 1.5 × the mean of random matrices of the same shapes (Q ${q}, K ${k}, V ${v}); blue Q, green K, red V; width by the ratio; click a head to open it`,
    // The circuit of edges (inspect-heads --circuit), on both pages.
    edgeCircuitTitle: 'The whole circuit, found by patching edges',
    edgeCircuitHint: 'As inspect-heads --circuit finds it on the probe set: every edge from the embeddings, a head or an MLP into a later head’s query, key or value, a later MLP or the logits that the answer needs; each edge outside the circuit carries what it carries on the answer-swapped prompt. Faithfulness: the share of the clean − corrupt logit difference the circuit alone keeps.',
    noEdgeCircuit: 'no probe set: the circuit is found on its pairs (inspect-heads --html ... --probe FILE)',
    edgeCircuitLabel: (kind) => `circuit of ${kind}`,
    edgeCircuitEdge: (s, r, own, exact, eap) => `${s} → ${r}: own effect ${own}, exact ${exact}, EAP ${eap}`,
    edgeCircuitNote: (kind, kept, edges, threshold, faith, incompl, rho, tau) => `${kind}: ${kept} of ${edges} edges at threshold ${threshold}, faithfulness ${faith}, incompleteness ${incompl}, EAP against exact: Spearman ${rho}, Kendall ${tau}. `,
    edgeCircuitLegend: 'Edges into a head: q above its centre (blue), k at it (green), v below (red); into an MLP grey, the logits black; width by the edge’s own effect.',
    liveEdgeCircuitTitle: 'The whole circuit on the probe set',
    liveEdgeCircuitHint: 'inspect-heads --circuit on the probe set (/api/circuit): the edges path patching keeps, for every question kind. The first request takes up to a minute; the answer is kept for this model.',
    edgeCircuitFind: 'find it',
    edgeCircuitFinding: 'finding the circuit on the probe set…',
    // The run.
    runTitle: 'Training run',
    loss: 'loss',
    natsPerSymbol: 'nats/symbol',
    trainMean: (n) => `train (mean of ${n})`,
    train: 'train',
    validation: 'validation',
    floor: (x) => `floor ${x}`,
    probeAccuracy: 'probe accuracy',
    all: 'all',
    shareRight: 'share right',
    noData: 'no data',
    step: 'step',
    stepLog: 'step (log)',
    score: 'score',
    scoreLabel: 'score ',
    headRoleScore: (name) => `head role score: ${name}`,
    noHeadRoles: 'head roles over training: metrics.jsonl carries no per-evaluation "head_roles"',
    runHint: (dir, lines, total, stride, skipped) => `${dir}/metrics.jsonl: ${lines} lines, ${total} evaluations` +
      (stride > 1 ? ` (every ${stride}th drawn, and the last)` : '') + (skipped ? `, ${skipped} lines skipped (not JSON, or no step)` : ''),
    runSummary: (dir, lines, total, last, floor) => `${dir}/metrics.jsonl: ${lines} lines, ${total} evaluations` +
      (last ? `; last: step ${last.step}, val ${last.val}` : '') + (floor ? ` (floor ${floor})` : ''),
    serving: (step, source, reloads, note) => `serving step ${step} from ${source}` +
      (reloads ? ` (reloaded ${reloads} time${reloads > 1 ? 's' : ''} as the run wrote it)` : '') + (note ? ` · ${note}` : ''),
    waitingModel: 'waiting for the run’s first checkpoint (latest.safetensors): the curves below follow the run; the heads appear when it is written',
    // The live page.
    typeText: 'Type a text',
    typeHint: 'Every view below is recomputed as you type. Click a symbol to make it the query position, or switch the click to swapping it (patching).',
    clickDoes: 'a click on a symbol:',
    clickQuery: 'makes it the query',
    clickSwap: 'swaps it (patching)',
    liveModelLine: (m, step, source, probe) => `model: ${m.n_layer} layers × ${m.n_head} heads, D = ${m.n_embd}, d = ${m.head_width}, block_size ${m.block_size}, ${m.vocab_size} symbols · step ${step} of ${source}` + (probe ? ` · probe ${probe}` : ' · no probe set'),
    typeAText: 'type a text',
    notInVocab: (n, list, more) => `not in the model’s ${n}-symbol vocabulary: ${list}${more ? ` and ${more} more` : ''}`,
    atPosition: (c, i) => `“${c}” at ${i}`,
    tooLong: (n, b) => `${n} symbols, more than the model’s block_size of ${b}`,
    nothingShown: ' — nothing is sent, and the views show no numbers until the text is fixed',
    textCleared: 'the text cannot be read by the model: nothing shown',
    serverRefused: (m) => `the server refused: ${m}`,
    couldNotStart: (m) => `the page could not start: ${m}`,
    nextTitle: 'Next symbol',
    temperature: 'temperature',
    topK: 'top-k',
    answerLabel: 'answer',
    againstLabel: 'against',
    modelsChoice: 'the model’s choice',
    symbol: 'symbol',
    probability: 'probability',
    logit: 'logit',
    withAblated: (list) => `with ${list} zeroed`,
    notInTop: '< top 10',
    logitDiff: (a, b, d) => `logit(${a}) − logit(${b}) = ${d}`,
    ablatedDiff: (list, d) => ` · with ${list} zeroed ${d}`,
    ablatedSymbol: 'zeroed: symbol',
    nextNote: (P, sym, temp, k) => `after position ${P} “${sym}”, temperature ${temp}${k ? `, top ${k}` : ''}: the 10 most likely symbols`,
    patchTitle: 'Patching',
    patchHint: 'Switch a click to “swaps it” above and click a symbol of the text, then its replacement: the corrupted text is run with each head’s output (hook_z), or the stream entering each layer at each position (resid_pre), taken from the clean text, as inspect-heads --patch does.',
    swapPick: (P, sym) => `replace “${sym}” at position ${P} with:`,
    swapTextFirst: 'symbols of the text first, then the rest of the vocabulary',
    clear: 'clear',
    noPatching: (m) => `no patching: ${m}`,
    livePatchNote: (clean, corrupt, a, b, c, d) => `clean “${clean}”, corrupt “${corrupt}”; logit(${a}) − logit(${b}): clean ${c}, corrupt ${d}; each value the share restored, (patched − corrupt) / (clean − corrupt)`,
    rolesTitle: 'Roles on the probe set',
    scoring: 'scoring…',
    noProbeServe: 'no probe set: start serve with --probe FILE (or a checkpoint whose config names data.probe_path)',
    rolesCols: ['head', 'role', 'prev', 'ind', 'ans', 'copy', 'probe drop'],
    ansKind: (k) => `ans ${k}`,
    dropKind: (k) => `drop ${k}`,
    rolesHint: (texts, acc, byKind, mean) => `${texts}; probe accuracy ${acc}${byKind ? ` (${byKind})` : ''}; probe drop: accuracy lost with the head ${mean ? 'mean-ablated' : 'zeroed'}`,
    // What the C++ sends as stable keys beside its English words (docs/cli.md): the texts the
    // role scores are over, why a section is not drawn, the logit lens's stages, the parts
    // of an attribution. Drawn by rolesTexts, reason, stage and part below.
    rolesTextsProbe: (n, probe) => `${n} probe prompts (${probe})`,
    rolesTextsText: 'the text alone (no probe set: give --probe FILE)',
    reasonVocabTooLarge: (v, max) => `the vocabulary has ${v} symbols, more than the ${max} the page draws`,
    reasonNoProbe: 'no probe set: the question’s corrupted partner comes from it',
    reasonNotProbeQuestion: 'the text is not a probe question with a source (the fact its answer copies)',
    stageEmbed: 'embed',
    stageAfter: (l) => `L${l}`,
    partEmbed: 'embed',
    partPosEmbed: 'pos_embed',
    partMlp: (l) => `L${l}.mlp`,
    partLnfBias: (name) => name,
    // The errors the live page can meet (serverError below): the server's error JSON carries
    // a code and its numbers (serve/api.cpp error_json); a request that never reached the
    // server, or an answer that is not JSON, is found here.
    errNetwork: 'the server did not answer (is mini-gpt serve still running?): the next edit asks again',
    errNoModel: 'no model yet: waiting for the run’s first checkpoint (latest.safetensors)',
    errBusy: 'the server is busy (every worker computing, its queue full): the next edit asks again',
    errUnknownSymbol: (p, n) => `the symbol at position ${p} is not in the model’s vocabulary of ${n} symbols (has the run changed its vocabulary? reload the page)`,
    errTooLong: (len, b) => `${len} symbols, more than the model’s block_size ${b}`,
    errEmptyText: 'the text is empty: type at least one symbol',
    errNoProbe: 'no probe set: roles are scored on one (start serve with --probe FILE)',
    errNoRun: 'no run is watched: start serve with --run DIR',
    errNotFound: (m) => `not found: ${m}`,
    errStepNotKept: (step) => `the run kept no model at step ${step} (removed since? move the slider)`,
    errOutOfMemory: 'the server ran out of memory',
    errInternal: (m) => `the server failed: ${m}`,
    errStatus: (s, m) => `the server refused (HTTP ${s}): ${m}`,
    errNotJson: (s) => `the server answered HTTP ${s} with no JSON`,
    reloadFailed: (d) => d,
    // The step slider and its formation events (serve --run).
    replayTitle: 'Replay the run',
    replayHint: 'Every view below shows the model the run kept at the evaluation chosen here; the marks are its formation events.',
    replayCurves: 'validation loss and probe accuracy at each evaluation, under the slider',
    replayLatestButton: 'latest',
    replayChainTitle: 'The chain --explain finds',
    replayKept: (step, source) => `evaluation at step ${step} (${source})`,
    replayLatest: (step) => `latest: step ${step}, the model served now`,
    replayEvents: (n) => `${n} formation event${n === 1 ? '' : 's'} (inspect-heads --timeline)`,
    replayNoChain: 'no probe set: the chain is found on one',
    replayFinding: 'finding the chain…',
    replayChainHeader: ['kind', 'accuracy', 'writer', 'carrier', ''],
    replayLearned: (learned, shortcut) => (learned ? 'learned' : shortcut ? 'a shortcut' : 'not learned'),
    replayChanged: 'changed most',
    replayGo: 'show',
    replayLegend: 'under the slider: the validation loss (solid, from its highest to its lowest) and each kind’s probe accuracy (dashed, 0 to 1) at each kept evaluation',
    explorerReplayHint: 'The run’s kept evaluations (inspect-heads --replay): moving the slider redraws the heads, the next symbol, the attribution, the roles and the chain at that evaluation; the worked trace, the circuits, the patching and the composition graph stay the page’s model’s. The marks are the run’s formation events.',
    replayPageModelButton: 'the page’s model',
    replayPageModel: (source) => `the page’s model: ${source}`,
    replayStepShown: (step, loss) => `evaluation at step ${step} (evals/step_${String(step).padStart(7, '0')}.safetensors; loss on the text ${loss})`,
    replayNoDrop: 'probe drop: measured for the page’s model only',
    replayNoChainHere: (step) => `no chain kept at step ${step}: the chain is found at the evaluations around each formation event and at the last one`,
    explorerNextNote: (P, sym, none) => `after position ${P} ${sym}${none ? ' (the query has none precomputed)' : ''}: the ten most likely symbols, as inspect-heads --next-symbol gives them (temperature 1)`,
    noteNoMetrics: 'no metrics.jsonl yet',
    noteMetricsTooLarge: (mib) => `metrics.jsonl is past ${mib} MiB: later lines are not followed`,
  };

  const zh = {
    langName: '中文',
    langLabel: '语言',
    explorerTitle: 'mini-gpt 注意力头浏览器',
    liveTitle: 'mini-gpt 实时页',
    glossaryLink: '术语表',
    glossaryTitle: '术语表：课程里的说法与程序里的名字',
    glossaryIntro: '每个术语按第12讲的说法和 mini-gpt 的名字并列，并说明 mini-gpt 怎样计算它（与 docs/glossary.md 相同）。',
    positionType: (p) => (p === 'rope' ? 'RoPE 位置（旋转 q 和 k）' : p === 'learned' ? '可学习的位置向量' : `位置：${p}`),
    modelLine: (m, pos) => `模型：${m.n_layer} 层 × ${m.n_head} 个头，D = ${m.n_embd}，d = ${m.head_width}，block_size ${m.block_size}，${m.vocab_size} 个字符，${pos}`,
    textOf: (n) => `文本 ${n} 个字符`,
    lossOnText: (x) => `这段文本上的损失 ${x} nats/字符`,
    probeLine: (probe, acc, mean, texts) => `检测集：${probe} · 准确率 ${acc} · “置零后检测准确率下降” = 把该头的输出${mean ? '换成均值' : '置零'}后损失的准确率 · 角色得分基于 ${texts}`,
    noProbeLine: (texts) => `没有检测集：角色得分基于 ${texts}；没有准确率下降（请给 --probe FILE）`,
    textTitle: '每个头读向哪些位置',
    layerLabel: '层',
    layerOption: (l) => `第${l}层`,
    textHint: '把鼠标移到、点击或聚焦一个查询字符；← → Home End 移动，Enter 固定。',
    queryToolbar: '查询字符',
    stripsLabel: '所选查询位置的注意力比例，每个头一行',
    positionTitle: (s, sym) => `位置 ${s}：${sym}`,
    masked: (s, sym, t) => `被读取位置 ${s} ${sym} 在查询位置 ${t} 之后：被因果屏蔽，比例为 0`,
    queryToKey: (t, ts, s, ss) => `查询 ${t} ${ts} → 被读取 ${s} ${ss}`,
    allWeights: (n) => `全部 ${n} 个比例`,
    readoutHint: (t, sym, pinned, l) => `查询位置 ${t} ${sym}${pinned ? '（已固定）' : ''}，第${l}层：每个头最大的三个读取比例（projected_weights）；每行之和为 1`,
    liveReadoutHint: (t, sym) => `查询位置 ${t} ${sym}：每个头最大的三个读取比例（projected_weights）；每行之和为 1`,
    gridTitle: '全部的头',
    gridHint: '每张热图是一个头的读取比例（行：查询字符，列：被读取字符；鼠标悬停可看二者）；点击卡片打开这个头。',
    liveGridTitle: '每一个头',
    liveGridHint: '每张热图是一个头的读取比例（行：查询字符，列：被读取字符；鼠标悬停可看二者）。点击卡片打开这个头；“置零”按钮做消融。',
    cardTitle: (name, role) => `${name}：${role}；点击打开`,
    thumbHover: (name, t, ts, s, ss, w) => `${name}：查询 ${t} ${ts} → 被读取 ${s} ${ss}：${w}`,
    thumbMasked: (name, t, ts, s, ss) => `${name}：查询 ${t} ${ts}，被读取 ${s} ${ss}：被屏蔽`,
    cardScores1: (prev, cur) => `前一字 ${prev} · 本字 ${cur}`,
    cardScores2: (first, ind) => `位置0 ${first} · 归纳 ${ind}`,
    cardScores3: (ans, copy) => `找答案 ${ans} · 前抄 ${copy}`,
    probeDrop: (x) => `置零后检测准确率下降 ${x}`,
    probeDropTitle: '置零后检测准确率下降：把这个头的输出置零（消融）后，整个检测集上损失的准确率',
    noProbeDrop: '没有检测集',
    lossIfZeroed: (x) => `置零后损失增加 ${x}`,
    lossIfZeroedTitle: '置零后损失增加：把这个头的输出置零后，这段文本上的损失（nats/字符）增加多少（只看这段文本，不是检测集）',
    ablate: '置零',
    ablated: '已置零',
    ablateTitle: (name) => `把 ${name} 的输出置零（消融），看没有它时的下一个字符`,
    roleLabel: (r) => `角色：${r}`,
    roleScore: '角色得分',
    value: '数值',
    namesRoleAt: (x) => `≥ ${x} 时得名`,
    scorePrev: '读前一字',
    scoreOffset: (k) => `最常读的偏移 ${k}`,
    scoreCur: '读本字',
    scoreFirst: '读位置0',
    scoreInduction: '归纳',
    scoreAnswer: '找答案（写答案头的读法）',
    scoreCopy: '前抄（带线索头的读法）',
    scoreAnswerKind: (k) => `找答案：${k}`,
    scoreCopyKind: (k) => `前抄：${k}`,
    noProbeNoDrop: '没有检测集：没有准确率下降',
    probeDropLine: (from, to, drop, how, byKind) => `置零后检测准确率：${from} → ${to}（下降 ${drop}，${how === 'mean' ? '均值' : '置零'}消融）${byKind ? '；按问题类型：' + byKind : ''}`,
    onThisText: (e, off, share, first, imp) => `在这段文本上：熵 ${e} nats · 最常读偏移 ${off}（${share}%）· 位置0上的比例 ${first} · 置零后损失增加 ${imp} nats`,
    detailHint: '鼠标悬停热图（或聚焦后用方向键）查看一个比例；点击一行（Enter）把它设为查询位置。',
    headTitle: '头',
    headTitleOf: (name, role) => `头 ${name}：${role}`,
    detailCanvas: '这个头的读取比例大图，行列标出字符（行：查询，列：被读取）',
    detailMasked: (t, ts, s, ss) => `查询 ${t} ${ts}，被读取 ${s} ${ss}：被屏蔽`,
    detailCell: (name, t, ts, s, ss, w) => `${name}：查询 ${t} ${ts} → 被读取 ${s} ${ss}：${w}`,
    rolesOver: (x) => `角色得分基于 ${x}`,
    theText: '这段文本',
    workedTrace: '逐步计算',
    queryPosition: '查询位置',
    tracesEvery: (n) => `每个位置都有逐步计算（${n}）`,
    tracesOnly: (list, budget) => `只有位置 ${list} 有逐步计算（层数 × 头数 × T 超过 ${budget}；inspect-heads --position P 可再加一个）`,
    noTraceAt: (p) => `位置 ${p} 没有逐步计算`,
    traceKeys: (n) => `${n} 个 K 向量`,
    traceValues: (n) => `${n} 个 V 向量`,
    keyCol: '被读取字符',
    forwardPass: '（前向计算）',
    traceTitle: (name, P, sym, D, d, h) => `${name}，查询位置 ${P} “${sym}”：D = ${D}，d = ${d}；这个头读 Wq、Wk、Wv 的第 ${h * d}..${h * d + d - 1} 行和 Wo 的第 ${h * d}..${h * d + d - 1} 列。头的输出 = softmax(q kᵀ / √d + 因果屏蔽) v，再经 Wo 加回残差流。`,
    traceX: (P, l, D) => `x_t = LayerNorm(位置 ${P} 的残差流；blocks.${l}.ln1) [D = ${D}] `,
    traceQ: (d) => `q_t = x_t Wq_hᵀ [d = ${d}] `,
    traceRope: (P) => `在位置 ${P} 旋转（RoPE）之后：`,
    traceLearned: '可学习位置：不旋转',
    traceK: (P) => `K 向量 k_s = x_s Wk_hᵀ，s = 0..${P}`,
    traceScores1: 'q·k_s 除以 √d（乘 ',
    traceScores2: '），加因果屏蔽，再 softmax：读取比例（projected_weights）的第 ',
    traceScores3: ' 行',
    traceV: 'V 向量 v_s = x_s Wv_hᵀ',
    traceOut: '头的输出 = Σ_s 比例_s v_s ',
    traceWo: (P) => `乘上 Wo 中属于这个头的列：它对位置 ${P} 残差流的贡献 [D] `,
    tracePush: (sigma) => `它推高的输出字符（直接 logit 归因，近似：中心化，除以最终残差流的 σ ${sigma}，乘 ln_f.weight，经过词表投影；不计后面的层）：推高`,
    down: '压低',
    liveTraceTitle: (name, P, sym, d) => `${name}，查询位置 ${P} “${sym}”：对位置 0..${P} 做 softmax(q·k / √${d})，再乘 Wo`,
    pushes: (up, down) => `推高 ${up}；压低 ${down}`,
    liveTraceHeading: '在查询位置逐步计算',
    circuitsTitle: '按字符看的 QK 与 OV 电路',
    notDrawn: (reason) => `未画出：${reason}`,
    querySymbol: '查询字符',
    keySymbol: '被读取字符',
    attendedSymbol: '被读取字符',
    outputSymbol: '输出字符',
    circuitHover: (name, rn, a, cn, b, v) => `${name}：${rn} “${a}”，${cn} “${b}”：≈ ${v}（8 位，仅用于画图）`,
    circuitPanel: (rn, cn, max) => `（行：${rn}，列：${cn}；红 > 0 > 蓝，±${max}）`,
    copyScore: (c, pct) => `OV 复制得分 ${c}（Σλ / Σ|λ|：1 为复制，−1 为压制）· 自身 logit 在 OV 行中最高的字符：${pct}%`,
    circuitsHint: '经过每个字符的嵌入和本层的 ln1：第0层偏移0时精确；后面的层略去前面各层的加入，OV 把 ln_f 当作线性。',
    circuitSection: '电路：哪些头写出答案，它们又读了哪些头',
    attributionTitle: '查询位置上的直接 logit 归因',
    attributionNote: (P, sym, none, a, b, diff) => `位置 ${P} ${sym}${none ? '（查询位置没有预先算好的归因）' : ''}：答案 ${a} 对比 ${b}，logit 差 ${diff}；每一部分经过 ln_f，缩放取自整条残差流并固定（直接 logit 归因，与 TransformerLens 的算法相同）`,
    liveAttributionNote: (P, a, b, diff) => `位置 ${P}：答案 “${a}” 对比 “${b}”，logit 差 ${diff}；每一部分经过缩放固定的 ln_f 后所占的份额（直接 logit 归因）`,
    liveCircuitTitle: '查询位置上的归因与 logit 透镜',
    lensTitle: 'logit 透镜',
    stage: '阶段',
    rankOf: (a) => `“${a}” 的名次`,
    topSymbols: '排名最前的字符',
    patchingTitle: '激活修补',
    noPatchingHere: (reason) => `本页没有激活修补：${reason}`,
    patchingNote: (corrupt, a, b, clean, cor) => `改动后的对照文本 ${corrupt}；logit 差 ${a} − ${b}：原文 ${clean}，改动后 ${cor}；每一格是恢复比例 (修补后 − 改动后) / (原文 − 改动后)，即把原文在该位置进入该层的残差流（resid_pre）放回去`,
    patchingCanvas: '恢复比例，每层一行，每个位置一列',
    patchingHover: (l, t, sym, v) => `第${l}层，位置 ${t} ${sym}：恢复 ${v}`,
    headCol: '头',
    restoredCol: '恢复比例（放回原文里它的输出 hook_z）',
    restored: '恢复比例',
    byPosition: '按位置（最大的几个）',
    legendLow: '−1：推向改动后的答案',
    legendZero: '0：没有变化',
    legendHigh: '+1：恢复了原文的 logit 差',
    negativeShare: '恢复比例为负：单独放回这个激活，反而让 logit 差比改动后的运行更偏向改动后的答案；它与原文其余部分的作用相反（比如一个压制别的头所写内容的头）。',
    gapWarning: (clean, corrupt, gap, min) => `警告：原文和改动后的 logit 差（${clean}、${corrupt}）只相差 ${gap}，小于 ${min}：太接近，测不出恢复比例；下面每个比例都除以这个差。`,
    chainTitle: '每类问题的读答案链',
    chainHint: '按 inspect-heads --explain 的方法在检测集上找出：写答案头，即在答案位置直接 logit 归因最大的头；带线索头，即写答案头通过 Q 或 K 读取（Q组合/K组合）的前面某个头，并且在换掉事实的线索时能恢复答案。图中两者都圈出。',
    kindLabel: '问题类型',
    noChain: '没有检测集：读答案链要在检测集上找（inspect-heads --html ... --probe FILE）',
    shortcut: (cue, no, with_) => ` — 靠捷径学会：只靠${cue || '线索'}（无干扰项 ${no}，有干扰项 ${with_}）；回答它的头：`,
    notLearned: ' — 没有学会（低于 0.9）；最好的候选：',
    chainAccuracy: (kind, acc, items, status) => `${kind}：在 ${items} 道检测题上准确率 ${acc}${status}。`,
    chainWriter: (w, attr, diff, rest) => `写答案头 ${w}：直接 logit 归因 ${attr}（logit 差 ${diff}），换掉答案时恢复 ${rest}。`,
    chainCarrier: (c, rest, w, keys, mode, score, base) => `带线索头 ${c}：换掉线索时恢复 ${rest}；${w} 通过它的 ${keys ? 'K' : 'Q'} 读取它（${mode}组合 ${score}，随机基线 ${base}）。`,
    noCarrier: '没有带线索头：前面没有一个头既在换掉线索时能恢复、又被写答案头读取。',
    chainMlps: (x) => `各层 MLP：${x}。`,
    graphTitle: '组合关系图',
    graphLabel: '组合关系图',
    graphLayer: (l) => `第${l}层`,
    edgeTitle: (w, r, mode, s, ratio, q, k, v) => `${w} → ${r}：${mode}组合 ${s}（基线的 ${ratio} 倍）；Q ${q} K ${k} V ${v}`,
    graphNote: (n, q, k, v) => `${n} 条边：组合得分至少是同形状随机矩阵均值的 1.5 倍（Q ${q}，K ${k}，V ${v}）；蓝 Q，绿 K，红 V；线宽表示倍数；点击一个头打开它`,
    edgeCircuitTitle: '完整回路：逐条边修补找出',
    edgeCircuitHint: '按 inspect-heads --circuit 在检测集上的找法：从字符嵌入、一个头或一个 MLP 连到后面某个头的 q、k 或 v 输入、后面某层 MLP 或 logits 的边，答案需要的都留下；回路外的每条边传的是换掉答案后的提示上的值。忠实度（faithfulness）：只留回路时，原文与改动后 logit 差之差还能保住的比例。',
    noEdgeCircuit: '没有检测集：回路要在检测集的成对题上找（inspect-heads --html ... --probe FILE）',
    edgeCircuitLabel: (kind) => `${kind} 的回路`,
    edgeCircuitEdge: (s, r, own, exact, eap) => `${s} → ${r}：自身作用 ${own}，精确值 ${exact}，EAP ${eap}`,
    edgeCircuitNote: (kind, kept, edges, threshold, faith, incompl, rho, tau) => `${kind}：阈值 ${threshold} 下保留 ${edges} 条边中的 ${kept} 条，忠实度（faithfulness）${faith}，不完整度（incompleteness）${incompl}，EAP 与精确值的秩相关：Spearman ${rho}，Kendall ${tau}。`,
    edgeCircuitLegend: '进入头的边：q 在方框中线之上（蓝），k 在中线（绿），v 在中线之下（红）；进入 MLP 的为灰色，进入 logits 的为黑色；线宽表示这条边自身的作用。',
    liveEdgeCircuitTitle: '检测集上的完整回路',
    liveEdgeCircuitHint: '在检测集上运行 inspect-heads --circuit（/api/circuit）：逐条边修补后留下的边，每类问题一张图。第一次请求最多要一分钟；结果对这个模型保留。',
    edgeCircuitFind: '找出回路',
    edgeCircuitFinding: '正在检测集上找回路…',
    runTitle: '训练过程',
    loss: '损失',
    natsPerSymbol: 'nats/字符',
    trainMean: (n) => `训练（${n} 步均值）`,
    train: '训练',
    validation: '验证',
    floor: (x) => `下限 ${x}`,
    probeAccuracy: '检测准确率',
    all: '全部',
    shareRight: '答对比例',
    noData: '没有数据',
    step: '步',
    stepLog: '步（对数）',
    score: '得分',
    scoreLabel: '得分 ',
    headRoleScore: (name) => `头的角色得分：${name}`,
    noHeadRoles: '训练中的角色得分：metrics.jsonl 里没有每次评估的 "head_roles"',
    runHint: (dir, lines, total, stride, skipped) => `${dir}/metrics.jsonl：${lines} 行，${total} 次评估` +
      (stride > 1 ? `（每 ${stride} 次画一次，外加最后一次）` : '') + (skipped ? `，跳过 ${skipped} 行（不是 JSON 或没有 step）` : ''),
    runSummary: (dir, lines, total, last, floor) => `${dir}/metrics.jsonl：${lines} 行，${total} 次评估` +
      (last ? `；最近：第 ${last.step} 步，验证损失 ${last.val}` : '') + (floor ? `（下限 ${floor}）` : ''),
    serving: (step, source, reloads, note) => `正在使用第 ${step} 步的模型（${source}）` +
      (reloads ? `（训练写入后已重新加载 ${reloads} 次）` : '') + (note ? ` · ${note}` : ''),
    waitingModel: '正在等待训练写出第一个检查点（latest.safetensors）：下面的曲线跟随训练；写出后各个头就会出现',
    typeText: '输入一段文本',
    typeHint: '下面每个视图都随输入重新计算。点击一个字符把它设为查询位置，或把点击切换为替换它（激活修补）。',
    clickDoes: '点击字符：',
    clickQuery: '设为查询位置',
    clickSwap: '替换它（激活修补）',
    liveModelLine: (m, step, source, probe) => `模型：${m.n_layer} 层 × ${m.n_head} 个头，D = ${m.n_embd}，d = ${m.head_width}，block_size ${m.block_size}，${m.vocab_size} 个字符 · 第 ${step} 步，来自 ${source}` + (probe ? ` · 检测集 ${probe}` : ' · 没有检测集'),
    typeAText: '请输入一段文本',
    notInVocab: (n, list, more) => `不在模型的 ${n} 字词表里：${list}${more ? `，另有 ${more} 个` : ''}`,
    atPosition: (c, i) => `位置 ${i} 的 “${c}”`,
    tooLong: (n, b) => `${n} 个字符，超过模型的 block_size ${b}`,
    nothingShown: ' — 没有发送；改好文本之前，各视图不显示数字',
    textCleared: '模型读不了这段文本：不显示任何结果',
    serverRefused: (m) => `服务器拒绝了请求：${m}`,
    couldNotStart: (m) => `页面无法启动：${m}`,
    nextTitle: '下一个字符',
    temperature: '温度',
    topK: 'top-k',
    answerLabel: '答案',
    againstLabel: '对比',
    modelsChoice: '模型的选择',
    symbol: '字符',
    probability: '概率',
    logit: 'logit',
    withAblated: (list) => `${list} 置零后`,
    notInTop: '< 前 10',
    logitDiff: (a, b, d) => `logit(${a}) − logit(${b}) = ${d}`,
    ablatedDiff: (list, d) => ` · ${list} 置零后 ${d}`,
    ablatedSymbol: '置零后：字符',
    nextNote: (P, sym, temp, k) => `位置 ${P} “${sym}” 之后，温度 ${temp}${k ? `，前 ${k}` : ''}：最可能的 10 个字符`,
    patchTitle: '激活修补',
    patchHint: '在上面把点击切换为“替换它”，点击文本中的一个字符，再点击替换成的字符：改动后的文本运行时，把原文中每个头的输出（hook_z）或每层每个位置进入前的残差流（resid_pre）放回去，与 inspect-heads --patch 相同。',
    swapPick: (P, sym) => `把位置 ${P} 的 “${sym}” 替换为：`,
    swapTextFirst: '先列文本里出现的字符，再列词表中其余的字符',
    clear: '清除',
    noPatching: (m) => `没有激活修补：${m}`,
    livePatchNote: (clean, corrupt, a, b, c, d) => `原文 “${clean}”，改动后 “${corrupt}”；logit(${a}) − logit(${b})：原文 ${c}，改动后 ${d}；每个值是恢复比例 (修补后 − 改动后) / (原文 − 改动后)`,
    rolesTitle: '检测集上的角色',
    scoring: '计算中…',
    noProbeServe: '没有检测集：用 --probe FILE 启动 serve（或用配置里写了 data.probe_path 的检查点）',
    rolesCols: ['头', '角色', '前一字', '归纳', '找答案', '前抄', '准确率下降'],
    ansKind: (k) => `找答案 ${k}`,
    dropKind: (k) => `下降 ${k}`,
    rolesHint: (texts, acc, byKind, mean) => `${texts}；检测准确率 ${acc}${byKind ? `（${byKind}）` : ''}；准确率下降：把该头${mean ? '换成均值' : '置零'}后损失的准确率`,
    rolesTextsProbe: (n, probe) => `${n} 道检测题（${probe}）`,
    rolesTextsText: '仅这段文本（没有检测集：用 --probe FILE 指定）',
    reasonVocabTooLarge: (v, max) => `词表有 ${v} 个字符，超过本页能画的 ${max} 个`,
    reasonNoProbe: '没有检测集：问题的改动对照文本要从检测集中取',
    reasonNotProbeQuestion: '这段文本不是一道有来源（答案所复述的事实）的检测题',
    stageEmbed: '嵌入',
    stageAfter: (l) => `第${l}层之后`,
    partEmbed: '字符嵌入',
    partPosEmbed: '位置嵌入',
    partMlp: (l) => `第${l}层 MLP`,
    partLnfBias: (name) => `ln_f 的偏置（${name}）`,
    errNetwork: '服务器没有回应（mini-gpt serve 还在运行吗？）：下次编辑时会再试',
    errNoModel: '还没有模型：正在等待训练写出第一个检查点（latest.safetensors）',
    errBusy: '服务器正忙（所有工作线程都在计算，等待队列已满）：下次编辑时会再试',
    errUnknownSymbol: (p, n) => `位置 ${p} 的字符不在模型的 ${n} 字词表里（训练换了词表？请刷新页面）`,
    errTooLong: (len, b) => `${len} 个字符，超过模型的 block_size ${b}`,
    errEmptyText: '文本是空的：请至少输入一个字符',
    errNoProbe: '没有检测集：角色要在检测集上计算（用 --probe FILE 启动 serve）',
    errNoRun: '没有在跟随训练：用 serve --run DIR 启动',
    errNotFound: (m) => `找不到：${m}`,
    errStepNotKept: (step) => `训练没有保存第 ${step} 步的模型（已被删除？请移动滑块）`,
    errOutOfMemory: '服务器内存不足',
    errInternal: (m) => `服务器内部出错：${m}`,
    errStatus: (s, m) => `服务器拒绝了请求（HTTP ${s}）：${m}`,
    errNotJson: (s) => `服务器返回 HTTP ${s}，内容不是 JSON`,
    reloadFailed: (d) => `检查点重新加载失败（服务器原文：${d}）`,
    replayTitle: '回放训练',
    replayHint: '下面每个视图显示训练在这里所选评估时保存的模型；标记是它的形成事件。',
    replayCurves: '每次评估的验证损失和检测准确率，在滑块下方',
    replayLatestButton: '最新',
    replayChainTitle: 'inspect-heads --explain 找到的读答案链',
    replayKept: (step, source) => `第 ${step} 步的评估（${source}）`,
    replayLatest: (step) => `最新：第 ${step} 步，正在使用的模型`,
    replayEvents: (n) => `${n} 个形成事件（inspect-heads --timeline）`,
    replayNoChain: '没有检测集：读答案链要在检测集上找',
    replayFinding: '正在找读答案链…',
    replayChainHeader: ['问题类型', '准确率', '写答案头', '带线索头', ''],
    replayLearned: (learned, shortcut) => (learned ? '学会了' : shortcut ? '靠捷径' : '没有学会'),
    replayChanged: '变化最大',
    replayGo: '显示',
    replayLegend: '滑块下方：每次保留的评估的验证损失（实线，从最高到最低）和每类问题的检测准确率（虚线，0 到 1）',
    explorerReplayHint: '训练保留的各次评估（inspect-heads --replay）：移动滑块，注意力头、下一个字符、归因、角色和读答案链都换成那次评估的模型；逐步计算、符号基下的电路、激活修补和组合图仍是本页模型的。标记是训练的形成事件。',
    replayPageModelButton: '本页的模型',
    replayPageModel: (source) => `本页的模型：${source}`,
    replayStepShown: (step, loss) => `第 ${step} 步的评估（evals/step_${String(step).padStart(7, '0')}.safetensors；在这段文本上的损失 ${loss}）`,
    replayNoDrop: '置零后的检测准确率下降：只对本页的模型测量',
    replayNoChainHere: (step) => `第 ${step} 步没有保存读答案链：读答案链只在每个形成事件前后的评估和最后一次评估上找`,
    explorerNextNote: (P, sym, none) => `位置 ${P} ${sym} 之后${none ? '（查询位置没有预先算好的结果）' : ''}：最可能的十个字符，与 inspect-heads --next-symbol 给出的相同（温度 1）`,
    noteNoMetrics: '还没有 metrics.jsonl',
    noteMetricsTooLarge: (mib) => `metrics.jsonl 超过 ${mib} MiB：后面的行不再跟随`,
  };

  // The glossary shown on both pages: [lesson's word, program's name, how mini-gpt computes it].
  const GLOSSARY = {
    en: [
      ['读取比例 (reading proportions)', 'projected_weights', 'softmax of q·k / √d with the causal mask, per head: row t the query, column s the key; every row sums to 1'],
      ['头0, 头1 (head 0, head 1)', 'L3.H1 = layer 3, head 1', 'head h of a layer reads features h·d .. h·d+d−1 of q, k and v; layers and heads count from 0'],
      ['分头 / 合头', 'split_heads / merge_heads', '[B,T,D] → [B,H,T,d] by reshape and transpose, and back by concatenation (not addition)'],
      ['查询位置 / 被读取位置', 'query / key position', 'row and column of projected_weights'],
      ['写答案头', 'writer', 'the head with the largest direct logit attribution at the answer (--explain); --roles names a head “writer” when its answer-finding score (weight on the answer’s source from the answer position) is ≥ 0.3'],
      ['带线索头', 'carrier', 'an earlier head the writer reads through Q or K, whose clean output restores ≥ 0.5 with the fact’s key swapped (--explain); --roles names a head “carrier” when its copy-forward score (weight on the symbol before the answer’s source) is ≥ 0.5'],
      ['恢复比例', 'restores, restored', '(patched − corrupt) / (clean − corrupt) of the logit difference; not measured when |clean − corrupt| < 1'],
      ['Q组合 / K组合 / V组合', 'Q-/K-/V-composition', 'how much a later head reads, through its queries, keys or values, what an earlier head writes: ‖OV(early)·QK(late)‖ (Q), ‖OV(early)·QK(late)ᵀ‖ (K), ‖OV(early)·OV(late)‖ (V), over the product of the norms (Elhage et al.), beside the mean over random matrices'],
      ['头的输出', 'hook_z', 'a head’s output at each position, softmax(…)·v, before Wo: what ablation zeroes and patching puts back'],
      ['进入某层前的残差流', 'resid_pre', 'the residual stream entering block L: what the patching heatmap puts back, per layer and position'],
      ['直接 logit 归因', 'direct logit attribution', 'a part of the final stream (a head through Wo, an MLP, the embeddings) through ln_f with its scale frozen and the vocabulary head: its share of logit(answer) − logit(against)'],
      ['logit 透镜', 'logit lens', 'the stream after each block through ln_f and the vocabulary head: the answer’s rank at each stage'],
      ['消融 (置零)', 'ablation', 'a head’s hook_z replaced by zero (or its mean); “probe drop if zeroed” is the probe accuracy lost, “loss if zeroed” the loss added on the text'],
      ['激活修补', 'patching', 'the corrupt text run with one activation (hook_z or resid_pre) from the clean run'],
      ['完整回路 (the whole circuit)', 'circuit, faithfulness', 'the edges between the embeddings, each head’s q, k and v inputs and output, each MLP and the logits that path patching keeps (ACDC, --circuit); faithfulness: the share of clean − corrupt the circuit alone keeps, every other edge from the corrupt run'],
      ['—', 'EAP', 'edge attribution patching: each edge’s effect estimated from one forward and one backward, (clean − corrupt sender) · gradient, beside the exact effect (--circuit)'],
      ['谁的 / 什么颜色… / 有什么… / 谁拿着 / 什么颜色', 'who / colour / what / holder / which_colour', 'the kinds of probe question, each answered by restating its fact'],
    ],
    zh: [
      ['读取比例', 'projected_weights', '每个头：q·k / √d 加因果屏蔽后做 softmax；第 t 行是查询位置，第 s 列是被读取位置；每行之和为 1'],
      ['头0、头1', 'L3.H1 = 第3层·头1', '一层里的头 h 读 q、k、v 的第 h·d .. h·d+d−1 个特征；层和头都从 0 数起'],
      ['分头 / 合头', 'split_heads / merge_heads', '[B,T,D] 经 reshape 和 transpose 变成 [B,H,T,d]；合头时按位置拼接（不是相加）'],
      ['查询位置 / 被读取位置', 'query / key position', '读取比例的行与列'],
      ['写答案头', 'writer', '在答案位置直接 logit 归因最大的头（--explain）；--roles 在“找答案”得分（从答案位置读答案来源的比例）≥ 0.3 时称它 writer'],
      ['带线索头', 'carrier', '写答案头通过 Q 或 K 读取的前面某个头，且换掉事实的线索时，放回它的原文输出能恢复 ≥ 0.5（--explain）；--roles 在“前抄”得分（答案来源处读前一字的比例）≥ 0.5 时称它 carrier'],
      ['恢复比例', 'restores, restored', 'logit 差的 (修补后 − 改动后) / (原文 − 改动后)；|原文 − 改动后| < 1 时不算'],
      ['Q组合 / K组合 / V组合', 'Q-/K-/V-composition', '后面的头通过 Q、K 或 V 读取前面的头写入的内容有多少：‖OV(前)·QK(后)‖（Q）、‖OV(前)·QK(后)ᵀ‖（K）、‖OV(前)·OV(后)‖（V），除以范数之积（Elhage 等），与随机矩阵的均值对比'],
      ['头的输出', 'hook_z', '一个头在每个位置的输出 softmax(…)·v，乘 Wo 之前：消融把它置零，激活修补把它放回'],
      ['进入某层前的残差流', 'resid_pre', '进入第 L 层的残差流：激活修补热图按层和位置放回的就是它'],
      ['直接 logit 归因', 'direct logit attribution', '最终残差流的一部分（经 Wo 的一个头、一个 MLP、嵌入）经过缩放固定的 ln_f 和词表投影：它在 logit(答案) − logit(对比) 中所占的份额'],
      ['logit 透镜', 'logit lens', '每层之后的残差流经过 ln_f 和词表投影：答案在每个阶段的名次'],
      ['消融（置零）', 'ablation', '把一个头的 hook_z 换成零（或均值）；“置零后检测准确率下降”是检测集上损失的准确率，“置零后损失增加”是这段文本上增加的损失'],
      ['激活修补', 'patching', '运行改动后的文本，只把一个激活（hook_z 或 resid_pre）换成原文运行中的值'],
      ['完整回路', 'circuit, faithfulness', '嵌入、每个头的 q、k、v 输入和输出、每层 MLP 与 logits 之间，逐边修补后留下的边（ACDC，--circuit）；忠实度：只留回路、其余每条边都取改动后的运行时，还能保住的 原文 − 改动后 的比例'],
      ['—', 'EAP', '边归因修补：用一次前向和一次反向估计每条边的作用，(原文 − 改动后的发送值) · 梯度，与精确值对比（--circuit）'],
      ['谁的 / 什么颜色… / 有什么… / 谁拿着 / 什么颜色', 'who / colour / what / holder / which_colour', '检测题的类型，每题都以复述事实作答'],
    ],
  };

  const tables = { en, zh };
  const STORE = 'mini-gpt.lang';
  function firstLanguage() {
    let stored = null;
    try {
      stored = window.localStorage.getItem(STORE);
    } catch (e) {  // storage refused (a file page under some settings): follow the browser
      stored = null;
    }
    if (stored === 'en' || stored === 'zh') return stored;
    return /^zh\b/i.test(navigator.language || '') ? 'zh' : 'en';
  }
  let lang = firstLanguage();

  function t(key, ...args) {
    const v = key in tables[lang] ? tables[lang][key] : en[key];
    if (v === undefined) return key;
    return typeof v === 'function' ? v(...args) : v;
  }
  // A kind with the question it stands for: "who (谁的)", in Chinese "谁的 (who)".
  function kind(k) {
    const q = QUESTION[k];
    if (!q) return k;
    return lang === 'zh' ? `${q} (${k})` : `${k} (${q})`;
  }
  // A role as interp/roles.cpp names it ("writer(what)+previous-token"): in English the
  // CLI's names, in Chinese each name translated; in both, each kind with its question
  // ("carrier(colour 什么颜色…,what 有什么…)", "带线索(什么颜色…,有什么…)").
  function role(name) {
    if (!name) return '';
    return name.split('+').map((part) => {
      const m = /^([a-z-]+?)(?:-(\d+))?(?:\(([^)]*)\))?$/.exec(part);
      if (!m) return part;
      const [, base, offset, kinds] = m;
      let shown = part.replace(/\(.*$/, '');
      if (lang === 'zh') shown = base === 'offset' && offset ? `读前${offset}字` : ROLE_ZH[offset ? `${base}-${offset}` : base] || shown;
      if (kinds) {
        shown += '(' + kinds.split(',').map((k) => (QUESTION[k] ? (lang === 'zh' ? QUESTION[k] : `${k} ${QUESTION[k]}`) : k)).join(',') + ')';
      }
      return shown;
    }).join('+');
  }
  const headName = (l, h) => `L${l}.H${h}`;

  // The texts role scores are over, from a role report's texts_source, text_count and
  // texts_probe (or a patterns answer's roles_* fields); ENGLISH, the C++'s own words, when
  // the source is neither "probe" nor "text".
  function rolesTexts(source, count, probe, english) {
    if (source === 'probe') return t('rolesTextsProbe', count, probe);
    if (source === 'text') return t('rolesTextsText');
    return english || '';
  }
  // Why a section is not drawn, from its reason_key (and numbers); its "reason" otherwise.
  function reason(r) {
    if (r.reason_key === 'vocab_too_large') return t('reasonVocabTooLarge', r.vocab_size, r.max_vocab_size);
    if (r.reason_key === 'no_probe') return t('reasonNoProbe');
    if (r.reason_key === 'not_probe_question') return t('reasonNotProbeQuestion');
    return r.reason || '';
  }
  // A logit lens stage ("embed", "L0": the stream after block 0) from its after_block.
  function stage(s) {
    if (!('after_block' in s)) return s.stage;
    return s.after_block === null ? t('stageEmbed') : t('stageAfter', s.after_block);
  }
  // An attribution part ("embed", "L0.H1", "L0.mlp", "ln_f.bias") from its part key.
  function part(p) {
    if (p.part === 'embed') return t('partEmbed');
    if (p.part === 'pos_embed') return t('partPosEmbed');
    if (p.part === 'head') return headName(p.layer, p.head);
    if (p.part === 'mlp') return t('partMlp', p.layer);
    if (p.part === 'ln_f_bias') return t('partLnfBias', p.name);
    return p.name;
  }
  // The note of /api/run (serve/run_watch.cpp writes one of two fixed lines): in the page's
  // language; any other note as the server wrote it.
  function runNote(note) {
    if (note === 'no metrics.jsonl yet') return t('noteNoMetrics');
    const past = /^metrics\.jsonl is past (\d+) MiB/.exec(note || '');
    return past ? t('noteMetricsTooLarge', past[1]) : note;
  }
  // An error of a request to the server in one line: E.network (fetch failed), else E.status
  // and E.body, the server's JSON, whose "code" names the error (serve/api.cpp error_json);
  // an error with neither is the page's own (its message).
  function serverError(e) {
    if (e.network) return t('errNetwork');
    if (e.status === undefined) return e.message;
    const b = e.body || {};
    if (typeof b.error !== 'string') return t('errNotJson', e.status);
    switch (b.code) {
      case 'unknown_symbol': return t('errUnknownSymbol', b.position, b.vocab_size);
      case 'too_long': return t('errTooLong', b.length, b.block_size);
      case 'empty_text': return t('errEmptyText');
      case 'no_model': return t('errNoModel');
      case 'busy': return t('errBusy');
      case 'no_probe': return t('errNoProbe');
      case 'no_run': return t('errNoRun');
      case 'not_found': return t('errNotFound', b.error);
      case 'step_not_kept': return t('errStepNotKept', b.step);
      case 'out_of_memory': return t('errOutOfMemory');
      case 'internal': return t('errInternal', b.error);
      default: break;
    }
    if (e.status === 429) return t('errBusy');  // a server older than the codes
    if (e.status === 503) return t('errNoModel');
    return t('errStatus', e.status, b.error);
  }

  // Every element with data-words="key" gets t(key) as its text; data-words-title and
  // data-words-label set title and aria-label.
  // A formation event's headline (interp/formation.h, report/formation_format.cpp): in English
  // the C++'s own words, in Chinese the same facts from the event's fields.
  const SCHEDULE_ZH = {
    'train.freeze_block0_qk_to_step': '第0层的查询和键不再固定',
    'data.random_rows_from_step': '从任意位置开始的行加入批次',
    'data.early_stories_to_step': '早期故事结束；所有故事都参与抽样',
  };
  function eventSubject(subject) {
    const [k, tag] = subject.split(' ');
    const tagWords = { distractors: '有干扰', no_distractor: '无干扰' };
    return tag ? `${kind(k)}·${tagWords[tag] || tag}` : kind(k);
  }
  function eventHeadline(e) {
    if (lang !== 'zh') return e.headline;
    const v = (x, digits) => (x === null || x === undefined ? '-' : Number(x).toFixed(digits));
    const values = (digits) => `${v(e.before, digits)} → ${v(e.after, digits)}`;
    switch (e.type) {
      case 'accuracy':
        return `${eventSubject(e.subject)} 的准确率${e.rising ? '升过' : '跌回'} ${Number(e.level).toFixed(2)}${e.rising ? '' : ' 以下'}（${values(3)}）`;
      case 'role_jump': return `头 ${e.subject} 跳变（${values(3)}）`;
      case 'loss_bump': return `验证损失上升（${values(4)}）`;
      case 'loss_plateau':
        return `验证损失从第 ${Math.round(e.level)} 步起停滞${e.after_step !== null && e.after_step === e.step ? '，已结束' : '，仍在持续'}（${values(4)}）`;
      case 'schedule': return `${SCHEDULE_ZH[e.subject] || e.subject}（${e.subject}）`;
      default: return e.headline;
    }
  }

  function applyStatic(root) {
    const scope = root || document;
    for (const e of scope.querySelectorAll('[data-words]')) e.textContent = t(e.dataset.words);
    for (const e of scope.querySelectorAll('[data-words-title]')) e.title = t(e.dataset.wordsTitle);
    for (const e of scope.querySelectorAll('[data-words-label]')) e.setAttribute('aria-label', t(e.dataset.wordsLabel));
    document.documentElement.lang = lang === 'zh' ? 'zh-CN' : 'en';
  }

  // The glossary, in the current language, into SECTION (both pages' #glossary-section): a
  // <details> opened by the header's link, its table the lesson's word, the program's, how.
  function drawGlossary(section, el) {
    const table = el('table', { id: 'glossary-table' });
    for (const [lesson, program, how] of GLOSSARY[lang])
      table.append(el('tr', {}, el('th', { text: lesson }), el('td', {}, el('code', { text: program })), el('td', { text: how })));
    const open = section.querySelector('details') ? section.querySelector('details').open : false;
    const details = el('details', { id: 'glossary' }, el('summary', {}, el('h2', { id: 'glossary-title', text: t('glossaryTitle') })),
      el('p', { class: 'hint', text: t('glossaryIntro') }), table);
    details.open = open;
    section.replaceChildren(details);
    const link = document.getElementById('glossary-link');  // the header's link opens it
    if (link) link.onclick = () => { details.open = true; };
  }

  // The switch in the header: a <select> whose change is remembered and handed to ONCHANGE.
  function bindSwitch(select, onChange) {
    select.replaceChildren(...['en', 'zh'].map((code) => {
      const o = document.createElement('option');
      o.value = code;
      o.textContent = tables[code].langName;
      return o;
    }));
    select.value = lang;
    select.addEventListener('change', () => {
      lang = select.value === 'zh' ? 'zh' : 'en';
      try {
        window.localStorage.setItem(STORE, lang);
      } catch (e) {  // not remembered, still switched
      }
      onChange(lang);
    });
  }

  return { t, kind, role, headName, eventHeadline, rolesTexts, reason, stage, part, serverError, runNote, applyStatic, drawGlossary, bindSwitch, lang: () => lang, tables, QUESTION };
}());
