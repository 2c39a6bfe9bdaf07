#!/usr/bin/env python3
"""Generates mini-gpt's shipped Chinese corpus, its probe set and its exact entropy floor.

A story is one line of at most 64 symbols (65 with its newline, one training row of
block_size + 1): three facts, then two questions about two of them, each answered by
restating its fact. Every fact is asked about only in the direction it is told, so each
answer symbol follows, in the restated fact, the same symbols that precede it in the fact:
the model reads it with a look-up (an induction head), never by composing two heads'
values. Two kinds of story (GRAMMAR's belongs_share is the chance of a belongs story):

  holds   3 facts 小丁拿着红苹果。 or, told the lesson's way, 小丁拿着红色的苹果。 (name,
          verb, colour, object; each fact's form drawn with GRAMMAR's lesson_share), asked
          by colour and what (小丁有什么？小丁拿着红色的苹果。: the colour, the object)
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
import hashlib
import json
import math
import os

import script_io

CORPUS_SEED = 12
PROBE_SEED = 1012
MIN_SYMBOLS = 500_000
DEFAULT_SYMBOLS = {"default": 4_000_000, "backward_who": 500_000, "v6": 4_000_000}
PROBE_ITEMS = {"default": 500, "backward_who": 500, "v6": 1000}  # v6: 100 of each kind with no distractor, 100 with
# A probe file mini-gpt reads is at most 64 MB (docs/cli.md); a line is at most about 260
# bytes (a prompt of BLOCK_SIZE three-byte symbols and its keys), so 200,000 items always fit.
MAX_PROBE_ITEMS = 200_000
MAX_PROBE_BYTES = 64 << 20
MAX_SYMBOLS = 1_000_000_000
VOCAB_SIZE = 79
BLOCK_SIZE = 64  # the model's block_size: a story with its newline fits one row of 65
VAL_FRACTION = 0.1  # configs' data.val_fraction, for the validation rows' floor

# The lists are chosen so that no character is shared between them and the whole text
# uses exactly 79 symbols: 17 template + 32 names + 10 colours + 20 object characters.
NAMES = list("丁王李张刘陈杨赵周吴徐孙马朱胡郭何林高罗郑梁谢宋唐许韩冯邓曹彭曾")  # 小X
COLOURS = list("红黄蓝绿白黑紫灰粉橙")
OBJECTS = ["苹果", "杯子", "帽子", "书包", "雨伞", "铅笔", "气球", "盒子", "风筝", "花瓶", "鞋子", "椅子"]
VERBS = {"default": ["拿着", "买了", "画过", "看见"], "backward_who": ["拿着", "买了", "画了", "看着"],
         "v6": ["拿着", "买了", "画过", "看见"]}
# Template characters: 小 的 色 。 ？ 谁 是 什 么 颜 newline, and the verbs' 拿 着 买 了 画 看.

# The story plans of each variant: (story kind, facts, questions).
VARIANTS = {
    "default": [("holds", 3, 2), ("belongs", 3, 2)],
    "backward_who": [("holds", 3, 3)],
    "v6": [],  # its own plan: make_v6_story
}
KINDS = {"default": ["who", "colour", "what"], "backward_who": ["who", "colour", "what"],
         "v6": ["who", "colour", "what", "holder", "which_colour"]}
# The default grammar leaves out 颜 and uses 过, 见 and 有 instead (its verbs end in four
# different characters, a story's facts have different verbs, and its question is
# 小丁有什么？), and tells a holds fact's colour either bare (红苹果) or the lesson's way
# (红色的苹果), so it names 30 people, not 32.
# v6 also uses 颜 (什么颜色) and names 29.
NAME_COUNT = {"default": 30, "backward_who": 32, "v6": 29}


# The default grammar's two choices of form (v5): the chance that a story is a belongs
# story (asked by who), and the chance that a holds fact tells its colour the lesson's way,
# 小丁拿着红色的苹果。 (else 小丁拿着红苹果。). Fractions, so that the floors below are
# exact sums of logs of whole numbers. Chosen by screening runs over seeds and kernels
# (data/learning.md, issue 40): two belongs stories in three, so that who, whose key lies
# furthest back, is asked as often as colour and what together; every holds fact the
# lesson's way, so that what's key (the colour, three symbols back) is one form, not two.
GRAMMAR = {"belongs_share": (2, 3), "lesson_share": (1, 1)}

# The v6 grammar's choices, fractions so that the floors below are exact sums of
# logs of whole numbers:
#   belongs_share     a story is a belongs story (红苹果是小丁的。, asked 红苹果是谁的？), else a
#                     holds story (小丁拿着红色的苹果。), told the lesson's way
#   third_fact        after two facts, a third fact (else the first question)
#   repeat            a later fact's verb and colour are an earlier fact's, drawn uniformly
#                     among the earlier facts (else drawn anew among all), so that facts
#                     often share the verb and the colour, and only the name (for who and
#                     holder, the object) tells them apart. Names and objects are distinct
#                     within a story: each tells its fact apart in one symbol
#   distinct_share    a story tells each fact with a verb and a colour of its own, as v5's
#                     do (the cue alone then finds every fact), else repeats them as above;
#                     the story's choice is not written, so each verb and colour costs the
#                     mixture's -ln p given the story so far
#   another_question  after an answer, another question, when one fits the row
#   question_weights  a holds question's form among those that fit: 小丁有什么？ (colour and
#                     what), 谁拿着红色的苹果？ (holder), 小丁拿着什么颜色的苹果？ (which_colour)
V6 = {"belongs_share": (1, 3), "third_fact": (1, 2), "repeat": (3, 4), "distinct_share": (1, 2), "another_question": (2, 3),
      "question_weights": {"has": 1, "holder": 2, "which_colour": 2, "whose": 1}}


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


def draw(rng, weights):
    """An index drawn with chance weights[i] / sum(weights), WEIGHTS whole numbers."""
    x = rng.below(sum(weights))
    for index, w in enumerate(weights):
        if x < w:
            return index
        x -= w
    raise RuntimeError("draw: no weight")


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

    def pick_share(self, share):
        """True with chance numerator/denominator, revealed by the next symbol written."""
        numerator, denominator = share
        chosen = self.rng.below(denominator) < numerator
        self.pending += math.log(denominator / (numerator if chosen else denominator - numerator))
        return chosen

    def pick_weighted(self, options, weights):
        """A choice with chance weights[i] / sum(weights) (whole numbers), revealed by the
        next symbol written: options with a weight must make that symbol different."""
        index = draw(self.rng, weights)
        self.pending += math.log(sum(weights) / weights[index])
        return options[index]

    def write_choice(self, choices, chosen):
        """Writes the text of the option CHOSEN among CHOICES, (option, text, chance) whose
        texts are distinct and none a prefix of another: each symbol carries ln(the chance
        of the options agreeing with the text before it / of those agreeing with it). The
        caller drew CHOSEN with those chances."""
        choices = [c for c in choices if c[2] > 0]
        text = next(c[1] for c in choices if c[0] == chosen)
        agreeing = choices
        for i, symbol in enumerate(text):
            still = [c for c in agreeing if len(c[1]) > i and c[1][i] == symbol]
            self.pending += math.log(math.fsum(c[2] for c in agreeing) / math.fsum(c[2] for c in still))
            self.write(symbol)
            agreeing = still
        if len(agreeing) != 1:
            raise RuntimeError("write_choice: options are not prefix-free")

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
    name, verb, colour, obj = fact[:4]
    if kind == "colour":
        return "小" + name + "的" + obj + "是什么颜色？", colour + "色。", 0
    if kind == "what":
        return "小" + name + verb + "什么？", obj + "。", 0
    return "谁" + verb + colour + obj + "？", "小" + name + "。", 1


def fact_text(story_kind, fact):
    name, verb, colour, obj = fact[:4]
    if story_kind == "holds":
        lesson = len(fact) > 4 and fact[4]
        return "小" + name + verb + colour + ("色的" if lesson else "") + obj + "。"
    return colour + obj + "是小" + name + "的。"


# The v6 grammar's questions. Each is (the question's text, the kinds it asks,
# each with the index of its answer symbol in the restated fact, the fact's attributes
# that must agree for another fact to be a distractor, and the index in the fact of the
# symbol that binds it to the question: the name, or the object's first symbol).
#   has           小丁有什么？            colour at 4 (cue: the verb), what at 7 (cue: verb and colour)
#   holder        谁拿着红色的苹果？       holder at 1, the name (cue: verb and colour; the object tells)
#   which_colour  小丁拿着什么颜色的苹果？  which_colour at 4 (cue: the verb; the name, or the object, tells)
#   whose         红苹果是谁的？           who at 5, the name (cue: the colour; the object tells)
# A distractor is another fact of the story that agrees with the asked fact on the cue: for
# it, only the binding (the name, or the object) tells the facts apart.
QUESTION_ANSWERS = {
    "has": [("colour", 4, ("verb",), 1), ("what", 7, ("verb", "colour"), 1)],
    "holder": [("holder", 1, ("verb", "colour"), 7)],
    "which_colour": [("which_colour", 4, ("verb",), 1)],
    "whose": [("who", 5, ("colour",), 1)],
}
ATTRIBUTE = {"name": 0, "verb": 1, "colour": 2, "object": 3}
# The probe's "cue" of each kind: what a distractor shares with the asked fact.
CUE_NAMES = {kind: " and ".join(cue) for answers in QUESTION_ANSWERS.values() for kind, _, cue, _ in answers}


def v6_question_text(question, fact):
    name, verb, colour, obj = fact[:4]
    if question == "has":
        return "小" + name + "有什么？"
    if question == "holder":
        return "谁" + verb + colour + "色的" + obj + "？"
    if question == "which_colour":
        return "小" + name + verb + "什么颜色的" + obj + "？"
    return colour + obj + "是谁的？"


def repeat_weights(values, earlier):
    """Whole-number weights of VALUES for a later fact: with chance V6's repeat, the value of
    an earlier fact drawn uniformly (a value told twice is twice as likely), else any value
    uniformly. EARLIER: the earlier facts' values. With repeat r = a/b, k earlier facts and
    n values, the chance of v is r count(v) / k + (1 - r) / n = (a n count(v) + (b - a) k) / (b k n)."""
    if not earlier:
        return [1] * len(values)
    r_num, r_den = V6["repeat"]
    k, n = len(earlier), len(values)
    return [r_num * n * earlier.count(v) + (r_den - r_num) * k for v in values]


def chances(weights):
    total = sum(weights)
    return [w / total for w in weights]


def draw_share(rng, share):
    numerator, denominator = share
    return rng.below(denominator) < numerator


def make_v6_story(story):
    """One v6 story (V6's comment): two facts, maybe a third, then questions while they fit.
    Returns its facts and its questions as v6_items (make_probe_set) takes them.
    Every choice is drawn with whole-number weights; a choice that the next symbols reveal
    together with another (a third fact or a question, a question or the story's end) is
    written by write_choice with every option's chance, so each symbol's -ln p is exact."""
    rng = story.rng
    belongs = story.pick_share(V6["belongs_share"])  # revealed by the first symbol: 小 or a colour
    story_kind = "belongs" if belongs else "holds"
    # Hidden: whether the story tells each fact with a verb and a colour of its own (as v5
    # does), else repeats them (repeat_weights). A value's chance is the mixture of the two
    # under what the story has told so far (BELIEF, the modes' posterior weights).
    distinct = draw_share(rng, V6["distinct_share"])
    share = V6["distinct_share"][0] / V6["distinct_share"][1]
    belief = {True: share, False: 1.0 - share}

    def mode_weights(values, earlier, own):
        return [0 if v in earlier else 1 for v in values] if own else repeat_weights(values, earlier)

    def value_chances(values, earlier):
        total = sum(belief.values())
        mixed = [0.0] * len(values)
        for mode, weight in belief.items():
            for i, c in enumerate(chances(mode_weights(values, earlier, mode))):
                mixed[i] += weight / total * c
        return mixed

    def observe(values, earlier, value):
        for mode in belief:
            belief[mode] *= chances(mode_weights(values, earlier, mode))[values.index(value)]

    def pick_value(values, earlier):
        """A verb or a colour: drawn in the story's mode, its -ln p the mixture's."""
        value = values[draw(rng, mode_weights(values, earlier, distinct))]
        story.pending -= math.log(value_chances(values, earlier)[values.index(value)])
        observe(values, earlier, value)
        return value

    all_names = NAMES[:NAME_COUNT["v6"]]
    facts, fact_starts, questions = [], [], []
    fact_length = 8 if belongs else 10

    def unused_names():
        return [n for n in all_names if n not in [f[0] for f in facts]]

    def object_weights():
        """A fact's object: any object not told yet in the story, uniformly, so that the
        object (like the name) tells the facts apart, in one symbol."""
        return [0 if o in [f[3] for f in facts] else 1 for o in OBJECTS]

    def fact_options(weight):
        """(option, text up to where it parts from every question, chance x WEIGHT) of each
        way a new fact can start: a belongs fact's colour and object, a holds fact's 小 and name."""
        if belongs:
            options = []
            for c, pc in zip(COLOURS, value_chances(COLOURS, [f[2] for f in facts])):
                for o, po in zip(OBJECTS, chances(object_weights())):
                    if po > 0:
                        options.append((("fact", c, o), c + o, weight * pc * po))
            return options
        names = unused_names()
        return [(("fact", n), "小" + n, weight / len(names)) for n in names]

    def draw_fact_start():
        if belongs:
            c = COLOURS[draw(rng, mode_weights(COLOURS, [f[2] for f in facts], distinct))]
            return ("fact", c, OBJECTS[draw(rng, object_weights())])
        names = unused_names()
        return ("fact", names[rng.below(len(names))])

    def fitting_questions(room):
        """The question forms whose question and restated fact fit ROOM symbols."""
        forms = ["whose"] if belongs else ["has", "holder", "which_colour"]
        return [q for q in forms if len(v6_question_text(q, facts[0])) + fact_length <= room]

    def question_options(weight, room):
        """A question: its form by V6's weights among those that fit, then any fact uniformly
        (one asked before included, so that no answer is found by elimination, the fact not
        asked yet, nor by copying the last answer)."""
        forms = fitting_questions(room)
        total = sum(V6["question_weights"][q] for q in forms)
        return [(("question", q, i), v6_question_text(q, facts[i]),
                 weight * V6["question_weights"][q] / total / len(facts)) for q in forms for i in range(len(facts))]

    def draw_question(room):
        forms = fitting_questions(room)
        q = forms[draw(rng, [V6["question_weights"][f] for f in forms])]
        return ("question", q, rng.below(len(facts)))

    def write_fact_rest(start):
        """The rest of a fact whose START (draw_fact_start's option) is written."""
        if belongs:
            _, colour, obj = start
            story.write("是小")
            name = story.pick(unused_names())
            story.write(name + "的。")
            return (name, "", colour, obj, False)
        name = start[1]
        verb = pick_value(VERBS["v6"], [f[1] for f in facts])
        story.write(verb)
        colour = pick_value(COLOURS, [f[2] for f in facts])
        story.write(colour + "色的")
        obj = story.pick_weighted(OBJECTS, object_weights())
        story.write(obj + "。")
        return (name, verb, colour, obj, True)

    def new_fact(start, choices):
        fact_starts.append(len(story.text))
        story.write_choice(choices, start)
        if belongs:  # its colour was written with the fact's start
            observe(COLOURS, [f[2] for f in facts], start[1])
        facts.append(write_fact_rest(start))

    for _ in range(2):
        new_fact(draw_fact_start(), fact_options(1.0))
    room = BLOCK_SIZE - 2 * fact_length  # symbols left before the newline
    third = V6["third_fact"][0] / V6["third_fact"][1]
    choices = fact_options(third) + question_options(1.0 - third, room)
    if draw_share(rng, V6["third_fact"]):
        new_fact(draw_fact_start(), choices)
        room -= fact_length
        choice = draw_question(room)
        story.write_choice(question_options(1.0, room), choice)
    else:
        choice = draw_question(room)
        story.write_choice(choices, choice)
    another = V6["another_question"][0] / V6["another_question"][1]
    asked = set()
    while True:  # CHOICE, a question, is written: restate its fact
        _, q, i = choice
        answer = fact_text(story_kind, facts[i])
        for kind, index, cue, key in QUESTION_ANSWERS[q]:
            shared = [ATTRIBUTE[a] for a in cue]
            others = [f for j, f in enumerate(facts) if j != i]
            distractors = sum(1 for f in others if all(f[a] == facts[i][a] for a in shared))
            partly = any(0 < sum(f[a] == facts[i][a] for a in shared) < len(shared) for f in others)
            questions.append({"kind": kind, "position": len(story.text) + index, "answer": answer[index],
                              "source": fact_starts[i] + index, "distractors": distractors, "partly": partly,
                              "repeated": (q, i) in asked, "key": fact_starts[i] + key})
        asked.add((q, i))
        room -= len(v6_question_text(q, facts[i])) + len(answer)
        story.write(answer)
        if not fitting_questions(room):  # nothing more fits: the story ends for sure
            story.write("\n")
            break
        choices = [(("end",), "\n", 1.0 - another)] + question_options(another, room)
        if not draw_share(rng, V6["another_question"]):
            story.write_choice(choices, ("end",))
            break
        choice = draw_question(room)
        story.write_choice(choices, choice)
    return facts, questions


def make_story(rng, variant):
    """One story. Returns (text, nll per symbol, questions) with each question as
    (kind, answer position, answer symbol, position of that symbol in the fact asked about);
    v6's questions are dictionaries with those and more (make_v6_story)."""
    story = Story(rng)
    if variant == "v6":
        _, questions = make_v6_story(story)
        if len(story.text) > BLOCK_SIZE + 1:
            raise RuntimeError(f"a story of {len(story.text)} symbols does not fit one row")
        return "".join(story.text), story.nll, questions
    if variant == "default":  # revealed by the first symbol: 小 or a colour
        plan = VARIANTS[variant][1 if story.pick_share(GRAMMAR["belongs_share"]) else 0]
    else:
        plan = story.pick(VARIANTS[variant])
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
            lesson = variant == "default" and story.pick_share(GRAMMAR["lesson_share"])  # revealed by 色 or the object
            if lesson:
                story.write("色的")
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
            lesson = False
        names.remove(name)
        colours.remove(colour)
        facts.append((name, verb, colour, obj, lesson))

    questions = []
    if variant == "default":
        # A question about a fact not asked yet; the answer restates that fact, so each
        # answer symbol follows the very symbols that precede it in the fact.
        options = list(range(fact_count))
        for _ in range(question_count):
            if story_kind == "holds":  # 小丁拿着什么？小丁拿着红苹果。
                texts = ["小" + facts[i][0] + "有什么？" for i in options]
            else:  # 红苹果是谁的？红苹果是小丁的。
                texts = [facts[i][2] + facts[i][3] + "是谁的？" for i in options]
            i = story.pick_text(options, texts)
            options.remove(i)
            if story_kind == "holds":  # indices in the restated fact: 小丁拿着红苹果 or 小丁拿着红色的苹果
                answers = [("colour", 4), ("what", 7 if facts[i][4] else 5)]
            else:
                answers = [("who", 5)]
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
    if variant == "v6":
        return v6_probe_set(rng, count)
    items = []
    while len(items) < count:
        text, _, questions = make_story(rng, variant)
        for kind, position, answer, source in questions:
            items.append({"prompt": text[:position], "answer": answer, "kind": kind, "source": source})
            if len(items) == count:
                break
    return items


def v6_probe_set(rng, count):
    """v6's probe is balanced: COUNT / (kinds x 2) items of each kind with no distractor and
    as many with one or more, the first drawn of each, in the order drawn. An item with no
    distractor has no other fact sharing any symbol of the cue (every cue symbol alone finds
    the fact); one with distractors has other facts sharing the whole cue (only binding finds
    it); an item in between, and a question asked before in its story (its answer stands
    right above it), are left out."""
    kinds = KINDS["v6"]
    quota = count // (2 * len(kinds))
    if quota * 2 * len(kinds) != count:
        raise script_io.ScriptError(f"--probe-items must be a multiple of {2 * len(kinds)} for v6 (each kind, with "
                                    "and without distractors, as many times)", 2)
    filled, items = {}, []
    while len(items) < count:
        text, _, questions = make_story(rng, "v6")
        for q in questions:
            bucket = (q["kind"], q["distractors"] > 0)
            if q["repeated"] or (q["partly"] and not q["distractors"]) or filled.get(bucket, 0) == quota:
                continue
            filled[bucket] = filled.get(bucket, 0) + 1
            items.append({"prompt": text[:q["position"]], "answer": q["answer"], "kind": q["kind"],
                          "source": q["source"], "distractors": q["distractors"], "cue": CUE_NAMES[q["kind"]],
                          "key": [q["key"]]})
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


# The validation tail that scripts/main_job.sh scores with `mini-gpt eval --text-file`: the
# corpus's last TAIL_SYMBOLS symbols, read as windows of BLOCK_SIZE targets starting at
# 0, 64, 128, ... (docs/cli.md): most windows begin mid-story.
TAIL_SYMBOLS = 50_000


def story_templates():
    """Every story of the default grammar as a template, with its probability: for each
    story kind, form of each holds fact (bare or the lesson's) and order of the two facts
    asked, the list of its symbols, each a literal or a slot (type, fact, character index)
    filled by that fact's name, verb, colour or object. The kind is drawn with chance
    GRAMMAR's belongs_share, each holds fact's form with its lesson_share, and the ordered
    pair of facts asked 1/6."""
    templates = []
    belongs, lesson = (n / d for n, d in (GRAMMAR["belongs_share"], GRAMMAR["lesson_share"]))
    for kind in ("holds", "belongs"):
        form_sets = [(False, False, False)] if kind == "belongs" else [
            (a, b, c) for a in (False, True) for b in (False, True) for c in (False, True)]
        for forms in form_sets:
            def fact(f):
                if kind == "holds":  # 小丁拿着红苹果。 or 小丁拿着红色的苹果。
                    return ([("lit", "小"), ("name", f, 0), ("verb", f, 0), ("verb", f, 1), ("colour", f, 0)]
                            + ([("lit", "色"), ("lit", "的")] if forms[f] else [])
                            + [("object", f, 0), ("object", f, 1), ("lit", "。")])
                return [("colour", f, 0), ("object", f, 0), ("object", f, 1), ("lit", "是"), ("lit", "小"),
                        ("name", f, 0), ("lit", "的"), ("lit", "。")]  # 红苹果是小丁的。

            def question(f):
                if kind == "holds":  # 小丁有什么？
                    return [("lit", "小"), ("name", f, 0)] + [("lit", c) for c in "有什么？"]
                return [("colour", f, 0), ("object", f, 0), ("object", f, 1)] + [("lit", c) for c in "是谁的？"]

            p_forms = (belongs if kind == "belongs" else (1.0 - belongs) * math.prod(
                lesson if form else 1.0 - lesson for form in forms))
            for first in range(3):
                for second in range(3):
                    if second != first:
                        slots = fact(0) + fact(1) + fact(2)
                        for f in (first, second):
                            slots += question(f) + fact(f)
                        templates.append((kind, slots + [("lit", "\n")], p_forms / 6))
    return templates


def falling(n, k):
    return math.prod(range(n - k + 1, n + 1))


def template_prefix_weights(template, offset, text):
    """For one template and the TEXT seen from symbol OFFSET of the story on: the weight
    P(template) * P(the story's symbols there equal TEXT[:m]) for m = 1, 2, ... while they
    can (a list, shorter than TEXT when the template cannot continue it). Names, colours
    and verbs are drawn without replacement within a story (distinct per fact), objects
    with replacement."""
    kind, slots, p_template = template
    pools = {"name": len(NAMES[:NAME_COUNT["default"]]), "colour": len(COLOURS), "verb": len(VERBS["default"])}
    texts = {"name": NAMES[:NAME_COUNT["default"]], "colour": COLOURS, "verb": VERBS["default"], "object": OBJECTS}
    allowed = {}  # (type, fact) -> the options still consistent
    weights = []
    for symbol, slot in zip(text, slots[offset:]):
        if slot[0] == "lit":
            if slot[1] != symbol:
                break
        else:
            kind_, f, index = slot
            key = (kind_, f)
            options = allowed.get(key, texts[kind_])
            options = [o for o in options if o[index] == symbol]
            if not options:
                break
            allowed[key] = options
            if kind_ != "object":  # distinct within the story: two facts cannot share an option
                chosen = [allowed[(kind_, g)] for g in range(3) if (kind_, g) in allowed]
                if any(len(c) == 1 for c in chosen) and len({c[0] for c in chosen if len(c) == 1}) < sum(
                        1 for c in chosen if len(c) == 1):
                    break
        weight = p_template
        for (kind_, f), options in allowed.items():
            if kind_ == "object":
                weight *= len(options) / len(OBJECTS)
        for kind_, pool in pools.items():
            fixed = [allowed[(kind_, g)] for g in range(3) if (kind_, g) in allowed]
            if any(len(o) != 1 for o in fixed):
                raise RuntimeError("template_prefix_weights: a name, colour or verb is always fixed by one symbol")
            weight /= falling(pool, len(fixed))
        weights.append(weight)
    return weights


def cut_story_nll(templates, text):
    """-ln p(TEXT[m] | TEXT[:m]) for m = 1 .. len(TEXT) - 1, where TEXT is what a window
    shows of a story it begins inside of (from the window's first symbol up to and with
    the story's newline): the window starts at a uniformly random symbol of an endless
    stream of stories, so each offset of each story is equally likely, weighted by the
    story's probability, and p(TEXT[:m]) is the sum over templates and offsets of the
    chance that the story's symbols there read TEXT[:m]."""
    reach = [0.0] * (len(text) + 1)  # reach[m]: the weight of reading TEXT[:m]
    for template in templates:
        for offset in range(len(template[1]) - 1):  # a window starting on the newline sees a fresh story
            for m, weight in enumerate(template_prefix_weights(template, offset, text), 1):
                reach[m] += weight
    return [-math.log(reach[m + 1] / reach[m]) for m in range(1, len(text))]


def window_floor(corpus, nll, first):
    """The floor of `mini-gpt eval --text-file` on corpus[first:]: windows of BLOCK_SIZE
    targets at first, first + 64, ...; a target in the story the window begins inside of
    is predicted from what the window shows of it (cut_story_nll), every later one from its
    story's start (nll, exact). Returns (predictions, nats per prediction), then the same
    for the targets in cut stories and for the others."""
    templates = story_templates()
    text = corpus[first:]
    windows = (len(text) - 1) // BLOCK_SIZE
    cut_targets, whole_targets = [], []
    for k in range(windows):
        w = first + k * BLOCK_SIZE
        newline = corpus.index("\n", w)
        cut = min(newline, w + BLOCK_SIZE)  # the last target read from the cut story
        if cut > w:
            cut_targets.extend(cut_story_nll(templates, corpus[w:cut + 1]))
        whole_targets.extend(nll[cut + 1:w + BLOCK_SIZE + 1])
    total = cut_targets + whole_targets
    if len(total) != windows * BLOCK_SIZE:
        raise RuntimeError("window_floor: a target was missed")
    return len(total), math.fsum(total) / len(total), (len(cut_targets), math.fsum(cut_targets) / len(cut_targets)), (
        len(whole_targets), math.fsum(whole_targets) / len(whole_targets))


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


def floors(corpus, nll, variant):
    """The corpus floor, the story-row floors of the train and validation splits (split as
    src/data/corpus.cpp does: the first floor((1 - val_fraction) n) symbols train), and
    (default grammar) the floor of eval's windows over the validation tail."""
    n = len(corpus)
    n_train = math.floor((1.0 - VAL_FRACTION) * n)
    result = {
        "corpus": math.fsum(nll) / n,
        "nats": math.fsum(nll),
        "train_rows": row_floor(corpus, nll, 0, n_train),
        "val_rows": row_floor(corpus, nll, n_train, n),
    }
    if variant == "default":
        result["tail"] = window_floor(corpus, nll, n - TAIL_SYMBOLS)
    return result


def floor_record(corpus_bytes, corpus, fl):
    """floors.json: what `mini-gpt train` and `eval --text-file` print beside a loss
    (src/io/floor_record.h), each floor tied to the exact bytes it was computed for."""
    texts = []
    if "tail" in fl:
        tail = corpus[-TAIL_SYMBOLS:].encode("utf-8")
        texts.append({"about": f"the corpus's last {TAIL_SYMBOLS:,} symbols (the validation tail), in windows "
                               f"of {BLOCK_SIZE} from its start",
                      "floor": round(fl["tail"][1], 6), "sha256": hashlib.sha256(tail).hexdigest()})
    record = {"block_size": BLOCK_SIZE, "corpus_sha256": hashlib.sha256(corpus_bytes).hexdigest(),
              "texts": texts, "val_fraction": VAL_FRACTION,
              "validation_story_rows": round(fl["val_rows"][1], 6)}
    return json.dumps(record, ensure_ascii=False, indent=2, sort_keys=True) + "\n"


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
    distractor_note, tag_note = "", ""
    if variant == "v6":
        distractor_note = (f", of each kind {len(probe) // (2 * len(KINDS[variant]))} with no distractor and as many "
                           "with one or more, the first drawn of each, in the order drawn (an item whose cue other facts "
                           "share only in part, and a question asked before in its story, are left out)")
        tag_note = ("; `distractors` is how many other facts of the story share the question's whole cue (`cue`, the "
                    "table above): 0 means no other fact shares any of it, so the cue alone finds the fact, 1 or more "
                    "that only binding does; `key` is the index of the symbol that binds the fact to the question (the "
                    "name, or the object's first symbol), what `inspect-heads --patch --swap key` replaces. `eval "
                    "--probe`, `train` and `inspect-heads --explain` report each kind's accuracy with and without "
                    "distractors, so a model that found one cue, not who holds what, shows a gap")
    tail_section = ""
    if "tail" in fl:
        predictions, tail_floor, (cut_count, cut_floor), (whole_count, whole_floor) = fl["tail"]
        tail_section = f"""

## The validation tail, read in windows that start anywhere

`scripts/main_job.sh` scores the corpus's last {TAIL_SYMBOLS:,} symbols with `mini-gpt eval --text-file`,
whose windows of {BLOCK_SIZE} targets start at 0, {BLOCK_SIZE}, {2 * BLOCK_SIZE}, ... of the text ({predictions // BLOCK_SIZE:,} windows,
{predictions:,} predictions); most begin mid-story, as a generation past `block_size` sees its
context. A target after the window's first newline is in a story the window shows from its
start: its floor is its own figure above. A target in the story the window begins inside of
can be predicted only from what the window shows of it. The window's first symbol is a
uniformly random symbol of an endless stream of stories, so every offset of every story is
equally likely, weighted by the story's probability, and

    p(next | shown) = R(shown + next) / R(shown),  R(x) = sum over stories S and offsets o of P(S) [S[o:] begins with x]

which the script computes exactly (`cut_story_nll`: the story's kind, which two facts are
asked in which order, then names, colours and verbs drawn without replacement and objects
with). An answer whose fact was cut off costs ln of the options the window leaves open, and
a window's first symbols do not know where in a story they stand. Over the tail:

**validation tail floor = {tail_floor:.6f} nats per prediction** (the validation story rows: {val_floor:.6f}):
{cut_count:,} predictions in the stories the windows begin inside of, at {cut_floor:.6f}, and {whole_count:,} in
stories shown from their start, at {whole_floor:.6f} (these hold each story's first symbols, where
its facts are drawn, more often than a story row does: a window ends before their answers).

`floors.json` records both floors, each with the SHA-256 of the bytes it holds for (the
corpus, the tail's UTF-8 text) and the block_size and val_fraction it assumes: `mini-gpt train`
prints the validation rows' floor beside its val loss, and `mini-gpt eval --text-file` the
tail's beside its loss, only when the corpus and the text are these very bytes."""
    if variant == "default":
        belongs_n, belongs_d = GRAMMAR["belongs_share"]
        lesson_n, lesson_d = GRAMMAR["lesson_share"]
        lesson_form = ("every holds fact tells its colour the lesson's way, `红色的苹果`, and a belongs fact bare,\n`红苹果`"
                       if lesson_n == lesson_d else
                       f"a holds fact tells its colour the lesson's way, `红色的苹果`, with chance {lesson_n}/{lesson_d}\n"
                       "(each fact drawn alone), else bare, `红苹果`, as every belongs fact does")
        grammar = f"""Each story is one of two kinds (its first symbol tells which): a belongs story with chance
{belongs_n}/{belongs_d}, else a holds story. 3 facts, then 2 questions about 2 of them, each answered by
restating its fact in full (the same symbols). As lesson 12 writes `小丁拿着红色的苹果。`,
{lesson_form}.

| story | fact | question | answer (the fact restated) | kind: answer symbol |
| --- | --- | --- | --- | --- |
| holds | `小<name><verb><colour><object>。` or `小<name><verb><colour>色的<object>。` | `小<name>有什么？` | the fact, as told | colour: the colour; what: the object's first character |
| belongs | `<colour><object>是小<name>的。` | `<colour><object>是谁的？` | `<colour><object>是小<name>的。` | who: the name character after `小` |

Every fact is asked about only in the direction it is told, and the answer repeats the fact's
own symbols up to the answer symbol: the model finds each answer symbol by matching the
symbols just before it with the same symbols in the fact and copying the one that follows
there (an induction head), never by composing two heads' values. In a holds answer the
name (copied from the question) finds the verb, the verb's last character (着 了 过 见,
different in each fact) the colour: one-symbol keys unique in the story. The colour finds
the object: the symbol before it in a bare fact, two symbols back in the lesson's form
(`红色的` -> 苹). A who answer's key, the colour, lies four symbols back (`红苹果是小` -> 丁). Names,
colours and holds verbs are distinct within a story, objects may repeat; a story never asks
about the same fact twice, and one of its three facts is never asked about, so no answer can
be found by elimination."""
        chance = """| kind | from the question alone | copying a random fact of the story of the right form |
| --- | --- | --- |
| who | 1/30 (any name) | 1/3 (1/2 for the second question: the first one's fact is not asked again) |
| colour | 1/10 (any colour) | 1/3 (1/2 for the second question) |
| what | 1/12 (any object) | 1/3 before the colour is found; once it is, one look-up of a unique colour |"""
    elif variant == "v6":
        share = {key: f"{n}/{d}" for key, value in V6.items() if key != "question_weights" for n, d in [value]}
        weights = V6["question_weights"]
        grammar = f"""Corpus v6 (issue 46): stories in which the name (for who and holder, the object) is the
only thing that tells the facts apart. Each story is a holds story (`小丁拿着红色的苹果。`,
told the lesson's way) or, with chance {share["belongs_share"]}, a belongs story (`红苹果是小丁的。`); its first
symbol tells which. Two facts, then a third with chance {share["third_fact"]}; then a question, answered by
restating its fact in full, and after each answer another question with chance {share["another_question"]} while one
fits the row of {BLOCK_SIZE} symbols.

| story | fact | question (its form's weight) | kind: the answer symbol | the cue a distractor shares |
| --- | --- | --- | --- | --- |
| holds | `小<name><verb><colour>色的<object>。` | `小<name>有什么？` ({weights["has"]}) | colour: the colour; what: the object's first character | colour: the verb; what: the verb and the colour |
| holds | | `谁<verb><colour>色的<object>？` ({weights["holder"]}) | holder (谁拿着): the name | the verb and the colour |
| holds | | `小<name><verb>什么颜色的<object>？` ({weights["which_colour"]}) | which_colour (什么颜色): the colour | the verb |
| belongs | `<colour><object>是小<name>的。` | `<colour><object>是谁的？` ({weights["whose"]}) | who (是谁的): the name | the colour |

A question's form is drawn by its weight among the forms that fit the row, its fact uniformly
among the story's facts, a fact asked before included: no answer is found by elimination or
by copying the last answer. Names and objects are distinct within a story and recur across
stories. With chance {share["distinct_share"]} a story tells each fact with a verb and a colour of its own, as v5
does, so the cue alone finds every fact; else a later fact's verb and colour repeat an
earlier fact's with chance {share["repeat"]} (drawn among the earlier facts, so a value told twice is twice
as likely) and are drawn anew among all otherwise: facts often share the verb and the colour,
and then only the name (for who and holder, the object) tells them apart. Which of the two a
story is, is not written: each verb and colour costs the mixture's -ln p given the story so
far. An answer whose whole cue another fact shares has a
**distractor**: the cue, the way an induction head matches the symbols just before the
answer, finds two facts, and only binding the name (or the object) to its fact finds the
right one."""
        chance = """| kind | the cue alone, with d distractors | from the question alone |
| --- | --- | --- |
| who | 1/(d+1) | 1/29 (any name) |
| colour | 1/(d+1) | 1/10 (any colour) |
| what | 1/(d+1) | 1/12 (any object) |
| holder | 1/(d+1) | 1/29 |
| which_colour | 1/(d+1) | 1/10 |"""
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
    title = {"default": "shipped corpus", "backward_who": "backward-who corpus", "v6": "v6 corpus"}[variant]
    folder = {"default": "data", "backward_who": "data/backward_who", "v6": "data/v6"}[variant]
    trained_by = {"backward_who": "the config `configs/backward_who.json` trains on it",
                  "v6": "the config `configs/v6.json` trains on it"}
    return f"""# The {title}

Generated by `scripts/make_corpus.py`; do not edit by hand. Regenerate with

    python3 scripts/make_corpus.py{flag} --out {folder}

(pure Python standard library, identical bytes under any Python 3.9+{"; `tests/corpus_test.cpp`" if variant == "default" else ""}
{"checks that it reproduces `corpus.txt`, `probe.jsonl` and this file byte for byte" if variant == "default" else trained_by[variant]}).
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
the {val_rows:,}, so it estimates the first figure with a sampling error of a few thousandths
(`data.random_row_fraction` mixes windows that start anywhere into the training batches only;
validation rows stay story rows).{tail_section}

## probe.jsonl

{len(probe)} held-out questions from fresh stories (seed {PROBE_SEED}): {kind_counts(probe, KINDS[variant])}{distractor_note}.
One JSON object per line, keys sorted: `prompt` is the story from its first symbol up to the
answer, ending right before the answer symbol (always within {BLOCK_SIZE} symbols); `answer` is
the one right next symbol; `kind` is {", ".join(KINDS[variant])}; `source` is the index in `prompt`
of the fact's symbol the answer is read from (`inspect-heads --roles` scores answer-finding there){tag_note}.

```
{examples}
```
"""


def main():
    parser = script_io.ArgumentParser(prog="make_corpus", description=__doc__.split("\n")[0])
    parser.add_argument("--out", default="data", help="output folder (default: data)")
    parser.add_argument("--variant", default="default", choices=sorted(VARIANTS),
                        help="default; backward_who, the hard reading (write it to data/backward_who); or v6, stories "
                             "where only binding names to facts answers (write it to data/v6)")
    parser.add_argument("--probe-seed", type=script_io.int_in(0, (1 << 64) - 1),
                        help="write only a fresh probe set drawn from this seed")
    parser.add_argument("--probe-items", type=script_io.int_in(1, MAX_PROBE_ITEMS),
                        help="its size (default 500, or 1,000 for v6: a multiple of 10 there)")
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
        probe = make_probe_set(args.variant, args.probe_seed, args.probe_items or PROBE_ITEMS[args.variant])
        lines = probe_lines(probe)
        if len(lines.encode("utf-8")) > MAX_PROBE_BYTES:  # (the bound above keeps it from happening)
            raise script_io.ScriptError(f"the probe set would hold more than the {MAX_PROBE_BYTES} bytes mini-gpt "
                                        "reads; give fewer --probe-items", 2)
        write_text(args.probe_out, lines, "--probe-out")
        print(f"{script_io.printable(args.probe_out)}: {len(probe)} items ({kind_counts(probe, KINDS[args.variant])}), seed {args.probe_seed}")
        return 0

    symbols = DEFAULT_SYMBOLS[args.variant] if args.symbols is None else args.symbols
    if args.out == "":
        parser.error("--out is empty")
    # Every output is checked before anything is written: a refusal leaves the folder as it was.
    for name in ("corpus.txt", "floors.json", "probe.jsonl", "README.md"):
        script_io.check_output_path(os.path.join(args.out, name))
    corpus, nll = make_corpus(args.variant, symbols)
    symbols = check_corpus(corpus)
    probe = make_probe_set(args.variant, PROBE_SEED, PROBE_ITEMS[args.variant])
    for item in probe:
        if len(item["prompt"]) > BLOCK_SIZE or item["answer"] not in symbols:
            raise script_io.ScriptError("a probe item does not fit the corpus", 1)
    fl = floors(corpus, nll, args.variant)

    try:
        os.makedirs(args.out, exist_ok=True)
    except OSError as e:
        raise script_io.ScriptError(f"cannot create --out folder {script_io.quoted(args.out)}: {e.strerror}", 1)
    write_text(os.path.join(args.out, "corpus.txt"), corpus)
    write_text(os.path.join(args.out, "floors.json"), floor_record(corpus.encode("utf-8"), corpus, fl))
    write_text(os.path.join(args.out, "probe.jsonl"), probe_lines(probe))
    write_text(os.path.join(args.out, "README.md"), readme(args.variant, args.out, corpus, symbols, fl, probe))
    print(f"corpus.txt: {len(corpus)} symbols, {len(symbols)} distinct, {corpus.count(chr(10))} stories")
    print(f"probe.jsonl: {len(probe)} items")
    print(f"entropy floor: {fl['corpus']:.6f} nats per symbol ({fl['nats']:.1f} nats); "
          f"validation story rows {fl['val_rows'][1]:.6f}, training story rows {fl['train_rows'][1]:.6f}"
          + (f"; the validation tail in eval's windows {fl['tail'][1]:.6f}" if "tail" in fl else ""))


if __name__ == "__main__":
    script_io.run_main("make_corpus", main)
