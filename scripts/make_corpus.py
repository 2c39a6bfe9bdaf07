#!/usr/bin/env python3
"""Generates mini-gpt's shipped Chinese corpus, its probe set and its exact entropy floor.

A story is one line of at most 64 symbols (65 with its newline, one training row of
block_size + 1): three facts, then two questions about two of them, each answered by
restating its fact. Every fact is asked about only in the direction it is told, so each
answer symbol follows, in the restated fact, the same symbols that precede it in the fact:
the model reads it with a look-up (an induction head), never by composing two heads'
values. Two kinds of story, drawn with equal chance:

  holds   3 facts 小丁拿着红苹果。 (name, verb, colour, object), asked by
          colour and what (小丁有什么？小丁拿着红苹果。: the colour, the object)
  belongs 3 facts 红苹果是小丁的。 (colour, object, name), asked by
          who (红苹果是谁的？红苹果是小丁的。: the name)

Names, colours and (in holds stories) verbs are distinct within a story, so each question
has one right answer; no fact is asked about twice and one fact of the three never is, so
the last answer can never be found by elimination.

`--variant backward_who` writes the hard reading instead (data/backward_who/README.md):
3 facts 小丁拿着红苹果。 asked by who *backwards* (谁拿着红苹果？小丁。, the name comes
before the colour it is found by), colour and what.

Output (identical bytes under any Python 3.9+; pure standard library, own PRNG, and no
iteration over sets or hash-ordered containers):
  OUT/corpus.txt   the corpus, one story per line, exactly 79 symbols: 4,000,000 symbols by
                   default (fewer stories are memorised rather than read: data/learning.md),
                   500,000 for backward_who
  OUT/probe.jsonl  held-out questions from another seed, {"answer", "kind", "prompt", "source"}
  OUT/README.md    what the corpus is, how to regenerate it, and its entropy floors

`--probe-seed S --probe-items N --probe-out FILE` writes only a fresh probe set.

The entropy floor: every symbol's negative log-probability under the generator given the
story so far, -ln p(symbol | story prefix), is tracked exactly (Story.nll). A choice
among n equally likely options adds ln(n) spread over the symbols that reveal it (for a
choice whose options are written out as texts: at each symbol, ln of how many options
agreed with the text before it over how many still agree). Its sum over the corpus is
the corpus's exact log-probability; its mean over a set of training rows is the lowest
cross-entropy any model can average on those rows.

Usage: python3 scripts/make_corpus.py --out data
"""

import argparse
import json
import math
import os

import script_io

CORPUS_SEED = 12
PROBE_SEED = 1012
MIN_SYMBOLS = 500_000
DEFAULT_SYMBOLS = {"default": 4_000_000, "backward_who": 500_000}
PROBE_ITEMS = 500
MAX_PROBE_ITEMS = 10_000_000  # bounds on what one call may generate: a typo must not run for days
MAX_SYMBOLS = 1_000_000_000
VOCAB_SIZE = 79
BLOCK_SIZE = 64  # the model's block_size: a story with its newline fits one row of 65
VAL_FRACTION = 0.1  # configs' data.val_fraction, for the validation rows' floor

# The lists are chosen so that no character is shared between them and the whole text
# uses exactly 79 symbols: 17 template + 32 names + 10 colours + 20 object characters.
NAMES = list("丁王李张刘陈杨赵周吴徐孙马朱胡郭何林高罗郑梁谢宋唐许韩冯邓曹彭曾")  # 小X
COLOURS = list("红黄蓝绿白黑紫灰粉橙")
OBJECTS = ["苹果", "杯子", "帽子", "书包", "雨伞", "铅笔", "气球", "盒子", "风筝", "花瓶", "鞋子", "椅子"]
VERBS = {"default": ["拿着", "买了", "画过", "看见"], "backward_who": ["拿着", "买了", "画了", "看着"]}
# Template characters: 小 的 色 。 ？ 谁 是 什 么 颜 newline, and the verbs' 拿 着 买 了 画 看.

# The story plans of each variant: (story kind, facts, questions).
VARIANTS = {
    "default": [("holds", 3, 2), ("belongs", 3, 2)],
    "backward_who": [("holds", 3, 3)],
}
KINDS = {"default": ["who", "colour", "what"], "backward_who": ["who", "colour", "what"]}
# The default grammar leaves out 色 and 颜 and uses 过, 见 and 有 instead (its verbs end in
# four different characters, a story's facts have different verbs, and its question is
# 小丁有什么？), so it names 31 people, not 32.
NAME_COUNT = {"default": 31, "backward_who": 32}


class SplitMix64:
    """splitmix64: a tiny, fully specified generator, so the corpus never depends on `random`."""

    MASK = (1 << 64) - 1

    def __init__(self, seed):
        self.state = seed & self.MASK

    def next_u64(self):
        self.state = (self.state + 0x9E3779B97F4A7C15) & self.MASK
        z = self.state
        z = ((z ^ (z >> 30)) * 0xBF58476D1CE4E5B9) & self.MASK
        z = ((z ^ (z >> 27)) * 0x94D049BB133111EB) & self.MASK
        return z ^ (z >> 31)

    def below(self, bound):
        """Uniform in [0, bound): rejects the top sliver of 2^64 that would bias the modulo."""
        limit = (1 << 64) - (1 << 64) % bound
        while True:
            x = self.next_u64()
            if x < limit:
                return x % bound


class Story:
    """A story's text with each symbol's exact negative log-probability given the text
    before it in the story (nats). Every random choice goes through pick/pick_text."""

    def __init__(self, rng):
        self.rng = rng
        self.text = []
        self.nll = []
        self.pending = 0.0  # nats of choices revealed by the next symbol written

    def write(self, text):
        for symbol in text:
            self.text.append(symbol)
            self.nll.append(self.pending)
            self.pending = 0.0

    def pick(self, options):
        """A uniform choice that the next symbol written reveals: every option must make
        that symbol different (the caller's grammar guarantees it)."""
        self.pending += math.log(len(options))
        return options[self.rng.below(len(options))]

    def pick_text(self, options, texts):
        """A uniform choice among options written as texts (distinct, none a prefix of
        another), written at once: each symbol carries ln(options agreeing before it /
        options agreeing with it)."""
        index = self.rng.below(len(options))
        chosen = texts[index]
        agreeing = list(range(len(options)))
        for i, symbol in enumerate(chosen):
            still = [j for j in agreeing if texts[j][i] == symbol]
            self.pending += math.log(len(agreeing) / len(still))
            self.write(symbol)
            agreeing = still
        if len(agreeing) != 1:
            raise RuntimeError("pick_text: options are not prefix-free")
        return options[index]


def question_text(kind, fact):
    """backward_who's questions: (question, answer, index of the answer symbol in the answer)."""
    name, verb, colour, obj = fact
    if kind == "colour":
        return "小" + name + "的" + obj + "是什么颜色？", colour + "色。", 0
    if kind == "what":
        return "小" + name + verb + "什么？", obj + "。", 0
    return "谁" + verb + colour + obj + "？", "小" + name + "。", 1


def fact_text(story_kind, fact):
    name, verb, colour, obj = fact
    if story_kind == "holds":
        return "小" + name + verb + colour + obj + "。"
    return colour + obj + "是小" + name + "的。"


def make_story(rng, variant):
    """One story. Returns (text, nll per symbol, questions) with each question as
    (kind, answer position, answer symbol, position of that symbol in the fact asked about)."""
    story = Story(rng)
    plan = story.pick(VARIANTS[variant])  # revealed by the first symbol: 小 or a colour
    story_kind, fact_count, question_count = plan
    names, colours, verbs = list(NAMES[:NAME_COUNT[variant]]), list(COLOURS), list(VERBS[variant])
    facts, fact_starts = [], []
    for _ in range(fact_count):
        fact_starts.append(len(story.text))
        if story_kind == "holds":  # 小丁拿着红苹果。
            story.write("小")
            name = story.pick(names)
            story.write(name)
            verb = story.pick(verbs)
            story.write(verb)
            if variant == "default":
                verbs.remove(verb)
            colour = story.pick(colours)
            story.write(colour)
            obj = story.pick(OBJECTS)
            story.write(obj + "。")
        else:  # 红苹果是小丁的。
            colour = story.pick(colours)
            story.write(colour)
            obj = story.pick(OBJECTS)
            story.write(obj + "是小")
            name = story.pick(names)
            story.write(name + "的。")
            verb = ""
        names.remove(name)
        colours.remove(colour)
        facts.append((name, verb, colour, obj))

    questions = []
    if variant == "default":
        # A question about a fact not asked yet; the answer restates that fact, so each
        # answer symbol follows the very symbols that precede it in the fact.
        options = list(range(fact_count))
        for _ in range(question_count):
            if story_kind == "holds":  # 小丁拿着什么？小丁拿着红苹果。
                texts = ["小" + facts[i][0] + "有什么？" for i in options]
                answers = [("colour", 4), ("what", 5)]  # indices in the restated fact
            else:  # 红苹果是谁的？红苹果是小丁的。
                texts = [facts[i][2] + facts[i][3] + "是谁的？" for i in options]
                answers = [("who", 5)]
            i = story.pick_text(options, texts)
            options.remove(i)
            answer = fact_text(story_kind, facts[i])
            for kind, index in answers:
                questions.append((kind, len(story.text) + index, answer[index], fact_starts[i] + index))
            story.write(answer)
    else:
        asked = []
        for _ in range(question_count):
            options = [(kind, i) for kind in KINDS[variant] for i in range(fact_count)
                       if (kind, i) not in asked and sum(1 for k, _ in asked if k == kind) < fact_count - 1]
            texts = [question_text(kind, facts[i])[0] for kind, i in options]
            kind, i = story.pick_text(options, texts)
            asked.append((kind, i))
            _, answer, index = question_text(kind, facts[i])
            source = fact_starts[i] + fact_text(story_kind, facts[i]).index(answer[index])
            questions.append((kind, len(story.text) + index, answer[index], source))
            story.write(answer)
    story.write("\n")
    if len(story.text) > BLOCK_SIZE + 1:
        raise RuntimeError(f"a story of {len(story.text)} symbols does not fit one row")
    return "".join(story.text), story.nll, questions


def make_corpus(variant, min_symbols=MIN_SYMBOLS):
    rng = SplitMix64(CORPUS_SEED)
    texts, nll = [], []
    while len(nll) < min_symbols:
        text, story_nll, _ = make_story(rng, variant)
        texts.append(text)
        nll.extend(story_nll)
    return "".join(texts), nll


def make_probe_set(variant, seed, count):
    """The questions of fresh stories drawn from SEED, in order, until COUNT. A prompt is
    its story from the start up to the answer symbol (never cropped: a story fits
    block_size)."""
    rng = SplitMix64(seed)
    items = []
    while len(items) < count:
        text, _, questions = make_story(rng, variant)
        for kind, position, answer, source in questions:
            items.append({"prompt": text[:position], "answer": answer, "kind": kind, "source": source})
            if len(items) == count:
                break
    return items


def row_floor(corpus, nll, first, last):
    """Mean floor over the rows a `data.row_start: "story"` sampler draws from the split
    corpus[first:last]: a row starts right after a newline, its targets are the next
    BLOCK_SIZE symbols (which may run into the next story), all inside the split.
    Returns (rows, nats per target symbol averaged over the rows)."""
    total, rows = 0.0, 0
    for start in range(first, last - BLOCK_SIZE):
        if start > first and corpus[start - 1] == "\n":
            total += math.fsum(nll[start + 1:start + 1 + BLOCK_SIZE])
            rows += 1
    return rows, total / (rows * BLOCK_SIZE)


def check_corpus(corpus):
    symbols = sorted(set(corpus))
    if len(symbols) != VOCAB_SIZE:
        raise script_io.ScriptError(f"corpus has {len(symbols)} distinct symbols, expected {VOCAB_SIZE}", 1)
    if len(corpus) < MIN_SYMBOLS:
        raise script_io.ScriptError(f"corpus has {len(corpus)} symbols, expected >= {MIN_SYMBOLS}", 1)
    return symbols


def write_text(path, text, what="output"):
    """Through a temporary and a rename; a link, folder or device at PATH is refused."""
    script_io.write_atomically(path, text, what)


def probe_lines(probe):
    return "".join(json.dumps(item, ensure_ascii=False, sort_keys=True) + "\n" for item in probe)


def floors(corpus, nll):
    """The corpus floor, and the story-row floors of the train and validation splits
    (split as src/data/corpus.cpp does: the first floor((1 - val_fraction) n) symbols train)."""
    n = len(corpus)
    n_train = math.floor((1.0 - VAL_FRACTION) * n)
    return {
        "corpus": math.fsum(nll) / n,
        "nats": math.fsum(nll),
        "train_rows": row_floor(corpus, nll, 0, n_train),
        "val_rows": row_floor(corpus, nll, n_train, n),
    }


def kind_counts(probe, kinds):
    return ", ".join(f"{sum(1 for item in probe if item['kind'] == kind)} {kind}" for kind in kinds)


def readme(variant, out, corpus, symbols, fl, probe):
    stories = corpus.count("\n")
    symbol_list = " ".join("\\n" if s == "\n" else s for s in symbols)
    sample = "\n".join(corpus.split("\n")[:4])
    examples = "\n".join(json.dumps(item, ensure_ascii=False, sort_keys=True) for item in probe[:3])
    train_rows, train_floor = fl["train_rows"]
    val_rows, val_floor = fl["val_rows"]
    flag = "" if variant == "default" else f" --variant {variant}"
    if variant == "default":
        grammar = """Each story is one of two kinds, drawn with equal chance (its first symbol tells which):
3 facts, then 2 questions about 2 of them, each answered by restating its fact in full.

| story | fact | question | answer (the fact restated) | kind: answer symbol |
| --- | --- | --- | --- | --- |
| holds | `小<name><verb><colour><object>。` | `小<name>有什么？` | `小<name><verb><colour><object>。` | colour: the colour; what: the object's first character |
| belongs | `<colour><object>是小<name>的。` | `<colour><object>是谁的？` | `<colour><object>是小<name>的。` | who: the name character after `小` |

Every fact is asked about only in the direction it is told, and the answer repeats the fact's
own symbols up to the answer symbol: the model finds each answer symbol by matching the
symbols just before it with the same symbols in the fact and copying the one that follows
there (an induction head), never by composing two heads' values. In a holds answer every
key is one symbol unique in its story: the name (copied from the question) finds the verb,
the verb's last character (着 了 过 见, different in each fact) the colour, the colour the
object. A who answer's key, the colour, lies four symbols back (`红苹果是小` -> 丁). Names,
colours and holds verbs are distinct within a story, objects may repeat; a story never asks
about the same fact twice, and one of its three facts is never asked about, so no answer can
be found by elimination."""
        chance = """| kind | from the question alone | copying a random fact of the story of the right form |
| --- | --- | --- |
| who | 1/31 (any name) | 1/3 (1/2 for the second question: the first one's fact is not asked again) |
| colour | 1/10 (any colour) | 1/3 (1/2 for the second question) |
| what | 1/12 (any object) | 1/3 before the colour is found; once it is, one look-up of a unique colour |"""
    else:
        grammar = """Every story states 3 facts `小<name><verb><colour><object>。` and asks 3 of these
questions (no (kind, fact) twice, a kind about at most 2 facts):

| kind | question | answer | the answer symbol |
| --- | --- | --- | --- |
| who | `谁<verb><colour><object>？` | `小<name>。` | the name character after `小` |
| colour | `小<name>的<object>是什么颜色？` | `<colour>色。` | the colour |
| what | `小<name><verb>什么？` | `<object>。` | the object's first character |

*who* is the hard reading: the name it asks for comes *before* the colour and object that
find it. A causal model cannot look up the colour and copy what follows; one head must first
copy the name forward onto the fact's later symbols and another read that copy through its
values (value composition). colour and what are read forward, as in the default corpus."""
        chance = """| kind | from the question alone | copying a random fact of the story |
| --- | --- | --- |
| who | 1/32 | 1/3 (1/2 for the second who question) |
| colour | 1/10 | 1/3 (1/2 for the second colour question) |
| what | 1/12 | about 1/3 |"""
    return f"""# The {"shipped corpus" if variant == "default" else "backward-who corpus"}

Generated by `scripts/make_corpus.py`; do not edit by hand. Regenerate with

    python3 scripts/make_corpus.py{flag} --out {"data" if variant == "default" else "data/backward_who"}

(pure Python standard library, identical bytes under any Python 3.9+{"; `tests/corpus_test.cpp`" if variant == "default" else ""}
{"checks that it reproduces `corpus.txt`, `probe.jsonl` and this file byte for byte" if variant == "default" else "the config `configs/backward_who.json` trains on it"}).
A fresh held-out probe from another seed: `python3 scripts/make_corpus.py{flag} --probe-seed 7 --probe-items 500 --probe-out probe7.jsonl`.
How the design was chosen, and every training run measured on it: `data/learning.md`.

## corpus.txt

{len(corpus):,} symbols (Unicode code points), {stories:,} stories, one per line, seed {CORPUS_SEED}.
Exactly {len(symbols)} distinct symbols, newline included, so `model.vocab_size` is {len(symbols)}:

    {symbol_list}

{grammar}

A story with its newline is at most {BLOCK_SIZE + 1} symbols, one training row of the config's
`data.row_start: "story"` sampler (a row starts at a story's start; its last symbols may run
into the next story). Lists: {NAME_COUNT[variant]} names (`小` + one of {"".join(NAMES[:NAME_COUNT[variant]])}),
{len(COLOURS)} colours ({"".join(COLOURS)}), {len(OBJECTS)} objects ({"、".join(OBJECTS)}),
{len(VERBS[variant])} verbs ({"、".join(VERBS[variant])}{", different in each story's facts" if variant == "default" else ""}).

The first stories:

```
{sample}
```

Chance levels per kind (the probe's accuracy of a model that has not learned the look-up):

{chance}

## Entropy floor

The generator tracks every symbol's exact negative log-probability given its story so far,
-ln p(symbol | story prefix): a uniform choice among n options adds ln(n) at the symbol that
reveals it (the story's kind at its first symbol, a name at the name, a question's kind and
fact at the symbols where the written-out options part; answers, templates and the newline
add 0). Different choices always give different text, so these sum to the corpus's exact
negative log-likelihood under its own generator, {fl["nats"]:.1f} nats over {len(corpus):,} symbols:

**entropy floor = {fl["corpus"]:.6f} nats per symbol** over the whole corpus.

A story depends on nothing before it, so for a training row that starts at a story's start the
floor of each of its {BLOCK_SIZE} targets is that symbol's own figure, and the floor of a set of
such rows is their mean (`row_floor` in the script). With `data.val_fraction` {VAL_FRACTION} the split
(the first floor(0.9 n) symbols train) gives

| rows that start at a story's start | rows | floor, nats per target symbol |
| --- | --- | --- |
| validation split (what `val_loss` samples) | {val_rows:,} | **{val_floor:.6f}** |
| training split | {train_rows:,} | {train_floor:.6f} |

The validation loss of a run is the mean over `eval_batches x batch_size` rows drawn from
the {val_rows:,}, so it estimates the first figure with a sampling error of a few thousandths. Random
64-symbol windows (`data.row_start: "random"`) lose their story's start and have no such exact floor.

## probe.jsonl

{len(probe)} held-out questions from fresh stories (seed {PROBE_SEED}): {kind_counts(probe, KINDS[variant])}.
One JSON object per line, keys sorted: `prompt` is the story from its first symbol up to the
answer, ending right before the answer symbol (always within {BLOCK_SIZE} symbols); `answer` is
the one right next symbol; `kind` is {", ".join(KINDS[variant])}; `source` is the index in `prompt`
of the fact's symbol the answer is read from (`inspect-heads --roles` scores answer-finding there).

```
{examples}
```
"""


def main():
    parser = script_io.ArgumentParser(prog="make_corpus", description=__doc__.split("\n")[0])
    parser.add_argument("--out", default="data", help="output folder (default: data)")
    parser.add_argument("--variant", default="default", choices=sorted(VARIANTS),
                        help="default, or backward_who: the hard reading (write it to data/backward_who)")
    parser.add_argument("--probe-seed", type=script_io.int_in(0, (1 << 64) - 1),
                        help="write only a fresh probe set drawn from this seed")
    parser.add_argument("--probe-items", type=script_io.int_in(1, MAX_PROBE_ITEMS), default=PROBE_ITEMS,
                        help=f"its size (default {PROBE_ITEMS})")
    parser.add_argument("--probe-out", help="the fresh probe set's file (with --probe-seed)")
    parser.add_argument("--symbols", type=script_io.int_in(MIN_SYMBOLS, MAX_SYMBOLS),
                        help=f"corpus size in symbols, at least {MIN_SYMBOLS:,} (default: 4,000,000, or 500,000 for backward_who)")
    args = parser.parse_args()

    if (args.probe_seed is None) != (args.probe_out is None):
        parser.error("--probe-seed and --probe-out go together")
    if args.probe_seed is not None:
        script_io.check_output_path(args.probe_out, "--probe-out")  # before the work, not after
        if args.probe_seed == CORPUS_SEED:
            parser.error(f"--probe-seed {CORPUS_SEED} is the corpus's own seed: its stories are not held out")
        probe = make_probe_set(args.variant, args.probe_seed, args.probe_items)
        write_text(args.probe_out, probe_lines(probe), "--probe-out")
        print(f"{script_io.printable(args.probe_out)}: {len(probe)} items ({kind_counts(probe, KINDS[args.variant])}), seed {args.probe_seed}")
        return 0

    symbols = DEFAULT_SYMBOLS[args.variant] if args.symbols is None else args.symbols
    if args.out == "":
        parser.error("--out is empty")
    for name in ("corpus.txt", "probe.jsonl", "README.md"):
        script_io.check_output_path(os.path.join(args.out, name))
    corpus, nll = make_corpus(args.variant, symbols)
    symbols = check_corpus(corpus)
    probe = make_probe_set(args.variant, PROBE_SEED, PROBE_ITEMS)
    for item in probe:
        if len(item["prompt"]) > BLOCK_SIZE or item["answer"] not in symbols:
            raise script_io.ScriptError("a probe item does not fit the corpus", 1)
    fl = floors(corpus, nll)

    try:
        os.makedirs(args.out, exist_ok=True)
    except OSError as e:
        raise script_io.ScriptError(f"cannot create --out folder {script_io.quoted(args.out)}: {e.strerror}", 1)
    write_text(os.path.join(args.out, "corpus.txt"), corpus)
    write_text(os.path.join(args.out, "probe.jsonl"), probe_lines(probe))
    write_text(os.path.join(args.out, "README.md"), readme(args.variant, args.out, corpus, symbols, fl, probe))
    print(f"corpus.txt: {len(corpus)} symbols, {len(symbols)} distinct, {corpus.count(chr(10))} stories")
    print(f"probe.jsonl: {len(probe)} items")
    print(f"entropy floor: {fl['corpus']:.6f} nats per symbol ({fl['nats']:.1f} nats); "
          f"validation story rows {fl['val_rows'][1]:.6f}, training story rows {fl['train_rows'][1]:.6f}")


if __name__ == "__main__":
    script_io.run_main("make_corpus", main)
