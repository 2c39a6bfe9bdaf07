#!/usr/bin/env python3
"""Generates mini-gpt's shipped Chinese corpus, its probe set and its entropy floor.

Each story states 2-3 facts, "小丁拿着红色的苹果。", then asks 1-3 questions back about
them: who holds the red apple (谁拿着红色的苹果？小丁。), what colour 小丁's apple is
(小丁的苹果是什么颜色？红色。), or what 小丁 holds (小丁拿着什么？苹果。). At every answer
position exactly one symbol is right, and it can only be copied from an earlier fact,
which starts at most 60 symbols before it: the two readings of one sentence (who holds
it / what colour it is) that lesson 12's multi-head attention is about.

Output (identical bytes under any Python 3.9+; pure standard library, own PRNG, and no
iteration over sets or hash-ordered containers):
  OUT/corpus.txt   the corpus, one story per line, >= 500,000 symbols, exactly 79 symbols
  OUT/probe.jsonl  held-out questions from another seed, {"answer", "kind", "prompt"}
  OUT/README.md    what the corpus is, how to regenerate it, and its entropy floor

The entropy floor is sum(ln(number of options)) over every uniform random choice, divided
by the number of symbols: the corpus's exact log-probability under the generator, in nats
per symbol. Distinct choice sequences give distinct texts, so no model can average below it.

Usage: python3 scripts/make_corpus.py --out data
"""

import argparse
import json
import math
import os
import sys

CORPUS_SEED = 12
PROBE_SEED = 1012
MIN_SYMBOLS = 500_000
PROBE_ITEMS = 500
VOCAB_SIZE = 79
ANSWER_REACH = 60  # an answer lies at most this many symbols after its fact's first symbol
PROMPT_LIMIT = 64  # the model's block_size: a probe prompt must fit

# The lists are chosen so that no character is shared between them and the whole text
# uses exactly 79 symbols: 17 template + 32 names + 10 colours + 20 object characters.
NAMES = list("丁王李张刘陈杨赵周吴徐孙马朱胡郭何林高罗郑梁谢宋唐许韩冯邓曹彭曾")  # 小X
COLOURS = list("红黄蓝绿白黑紫灰粉橙")  # X色
OBJECTS = ["苹果", "杯子", "帽子", "书包", "雨伞", "铅笔", "气球", "盒子", "风筝", "花瓶", "鞋子", "椅子"]
VERBS = ["拿着", "买了", "画了", "看着"]
KINDS = ["who", "colour", "what"]
# Template characters: 小 的 色 。 ？ 谁 是 什 么 颜 newline, and the verbs' 拿 着 买 了 画 看.


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


class Chooser:
    """Every random choice goes through here, so the entropy floor counts each one."""

    def __init__(self, seed):
        self.rng = SplitMix64(seed)
        self.option_counts = {}  # number of options -> how many choices had that many

    def pick(self, options):
        n = len(options)
        if n == 0:
            raise RuntimeError("a choice with no options")
        self.option_counts[n] = self.option_counts.get(n, 0) + 1
        return options[self.rng.below(n)]

    def sample_distinct(self, options, k):
        """k distinct options in drawn order: k successive uniform choices."""
        pool = list(options)
        drawn = []
        for _ in range(k):
            item = self.pick(pool)
            pool.remove(item)
            drawn.append(item)
        return drawn

    def nats(self):
        # Summed in ascending order of the option count, so the float result is reproducible.
        return sum(count * math.log(n) for n, count in sorted(self.option_counts.items()))


def fact_sentence(fact):
    name, verb, colour, obj = fact
    return "小" + name + verb + colour + "色的" + obj + "。"


def question(kind, fact):
    """(question text, answer text, index of the answer symbol within the answer text)."""
    name, verb, colour, obj = fact
    if kind == "who":
        return "谁" + verb + colour + "色的" + obj + "？", "小" + name + "。", 1
    if kind == "colour":
        return "小" + name + "的" + obj + "是什么颜色？", colour + "色。", 0
    return "小" + name + verb + "什么？", obj + "。", 0


def answer_symbol(kind, fact):
    text, answer, index = question(kind, fact)
    return answer[index]


def make_story(chooser):
    """One story: its text (without newline) and its questions as
    (kind, answer position, answer symbol, start of the fact, sentence starts before it)."""
    people = chooser.pick([2, 3])
    names = chooser.sample_distinct(NAMES, people)
    colours = chooser.sample_distinct(COLOURS, people)  # distinct, so "谁...红色的..." is unique
    facts = []
    for i in range(people):
        facts.append((names[i], chooser.pick(VERBS), colours[i], chooser.pick(OBJECTS)))

    text = ""
    fact_starts = []
    sentence_starts = []
    for fact in facts:
        fact_starts.append(len(text))
        sentence_starts.append(len(text))
        text += fact_sentence(fact)

    questions = []
    for _ in range(chooser.pick([1, 2, 3])):
        # Only questions whose fact starts within ANSWER_REACH symbols of the answer are
        # allowed; the choice is uniform over those, and the floor counts exactly them.
        options = []
        for kind in KINDS:
            for i, fact in enumerate(facts):
                q, _, index = question(kind, fact)
                if len(text) + len(q) + index - fact_starts[i] <= ANSWER_REACH:
                    options.append((kind, i))
        kind, i = chooser.pick(options)
        q, answer, index = question(kind, facts[i])
        sentence_starts.append(len(text))
        position = len(text) + len(q) + index
        questions.append((kind, position, answer[index], fact_starts[i], list(sentence_starts)))
        text += q + answer
        if text[position] != answer_symbol(kind, facts[i]):
            raise RuntimeError("answer position bookkeeping is wrong")
    return text, questions


def make_corpus():
    chooser = Chooser(CORPUS_SEED)
    stories = []
    symbols = 0
    while symbols < MIN_SYMBOLS:
        text, _ = make_story(chooser)
        stories.append(text + "\n")
        symbols += len(text) + 1
    return "".join(stories), chooser.nats()


def make_probe_set():
    """Every question of fresh stories drawn with PROBE_SEED. The prompt is the story up to
    the answer, cropped from the left at the earliest sentence start that fits in
    PROMPT_LIMIT symbols; the fact it asks about always stays inside."""
    chooser = Chooser(PROBE_SEED)
    items = []
    while len(items) < PROBE_ITEMS:
        text, questions = make_story(chooser)
        for kind, position, answer, fact_start, starts in questions:
            start = next(s for s in starts if position - s <= PROMPT_LIMIT)
            if start > fact_start:
                raise RuntimeError("a probe prompt would lose its fact")
            items.append({"prompt": text[start:position], "answer": answer, "kind": kind})
            if len(items) == PROBE_ITEMS:
                break
    return items


def check_corpus(corpus):
    symbols = sorted(set(corpus))
    if len(symbols) != VOCAB_SIZE:
        raise SystemExit(f"make_corpus: error: corpus has {len(symbols)} distinct symbols, expected {VOCAB_SIZE}")
    if len(corpus) < MIN_SYMBOLS:
        raise SystemExit(f"make_corpus: error: corpus has {len(corpus)} symbols, expected >= {MIN_SYMBOLS}")
    return symbols


def write_text(path, text):
    with open(path, "w", encoding="utf-8", newline="\n") as out:
        out.write(text)


def readme(corpus, symbols, nats, probe):
    floor = nats / len(corpus)
    stories = corpus.count("\n")
    kinds = {kind: sum(1 for item in probe if item["kind"] == kind) for kind in KINDS}
    symbol_list = " ".join("\\n" if s == "\n" else s for s in symbols)
    sample = "\n".join(corpus.split("\n")[:4])
    examples = "\n".join(json.dumps(item, ensure_ascii=False, sort_keys=True) for item in probe[:3])
    return f"""# The shipped corpus

Generated by `scripts/make_corpus.py`; do not edit by hand. Regenerate with

    python3 scripts/make_corpus.py --out data

(pure Python standard library, identical bytes under any Python 3.9+; `tests/corpus_test.cpp`
checks that it reproduces `corpus.txt`, `probe.jsonl` and this file byte for byte).

## corpus.txt

{len(corpus):,} symbols (Unicode code points), {stories:,} stories, one per line, seed {CORPUS_SEED}.
Exactly {len(symbols)} distinct symbols, newline included, so `model.vocab_size` is {len(symbols)}:

    {symbol_list}

A story states 2 or 3 facts, each `小<name><verb><colour>色的<object>。` with distinct names
and distinct colours (objects may repeat), then asks 1 to 3 questions about them:

| kind | question | answer | the answer symbol |
| --- | --- | --- | --- |
| who | `谁<verb><colour>色的<object>？` | `小<name>。` | the name character after `小` |
| colour | `小<name>的<object>是什么颜色？` | `<colour>色。` | the colour character |
| what | `小<name><verb>什么？` | `<object>。` | the object's first character |

The answer symbol is fixed by the earlier text and can only be copied from the fact it asks
about, whose first symbol lies at most {ANSWER_REACH} symbols before the answer (questions that
would reach further are never drawn). Finding it takes two different readings of the same
sentence: *who* holds the red apple, *which colour* 小丁's apple is. Lists: {len(NAMES)} names
(`小` + one of {"".join(NAMES)}), {len(COLOURS)} colours ({"".join(COLOURS)}),
{len(OBJECTS)} objects ({"、".join(OBJECTS)}), {len(VERBS)} verbs ({"、".join(VERBS)}).

The first stories:

```
{sample}
```

## Entropy floor

Every random choice of the generator is uniform: the number of facts (2 or 3), the names
and colours (drawn without replacement), each fact's verb and object, the number of
questions (1 to 3), and each question's kind and fact (among those within reach). The sum
of ln(number of options) over all choices is {nats:.1f} nats over {len(corpus):,} symbols:

**entropy floor = {floor:.6f} nats per symbol.**

Different choices always give different text, so this is the corpus's exact negative
log-probability under its own generator; no model can average a lower cross-entropy over
the corpus. A model trained on random 64-symbol windows sits somewhat above it: a window's
first symbols have lost their story's start. The validation tail (the last tenth) is a
sample of the same process, so its floor is close to, not exactly, this figure.

## probe.jsonl

{len(probe)} held-out questions from fresh stories (seed {PROBE_SEED}): {kinds["who"]} who,
{kinds["colour"]} colour, {kinds["what"]} what. One JSON object per line, keys sorted:
`prompt` is the story up to the answer, ending right before the answer symbol, cropped from
the left at a sentence start so that it fits in {PROMPT_LIMIT} symbols (the fact asked about
always stays inside); `answer` is the one right next symbol; `kind` is who, colour or what.

```
{examples}
```
"""


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--out", default="data", help="output folder (default: data)")
    args = parser.parse_args()

    corpus, nats = make_corpus()
    symbols = check_corpus(corpus)
    probe = make_probe_set()
    for item in probe:
        if len(item["prompt"]) > PROMPT_LIMIT or item["answer"] not in symbols:
            raise SystemExit("make_corpus: error: a probe item does not fit the corpus")

    os.makedirs(args.out, exist_ok=True)
    write_text(os.path.join(args.out, "corpus.txt"), corpus)
    write_text(os.path.join(args.out, "probe.jsonl"),
               "".join(json.dumps(item, ensure_ascii=False, sort_keys=True) + "\n" for item in probe))
    write_text(os.path.join(args.out, "README.md"), readme(corpus, symbols, nats, probe))
    print(f"corpus.txt: {len(corpus)} symbols, {len(symbols)} distinct, {corpus.count(chr(10))} stories")
    print(f"probe.jsonl: {len(probe)} items")
    print(f"entropy floor: {nats / len(corpus):.6f} nats per symbol ({nats:.1f} nats)")


if __name__ == "__main__":
    sys.exit(main())
