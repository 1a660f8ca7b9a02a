"""Sentences of the indirect-object kind, a word-level tokenizer, and the small GPT trained on them.

Taught in Part IV, "Inside a model that learned something" (after Wang et al. 2022). A sentence names two
people, then one of them (the subject S) gives something to the other (the indirect object IO):

    When Mary and John went to the store, John gave a drink to | Mary

The last word is predictable only by finding the name that was mentioned once. The generator is
deterministic from a seed; the name pairs (NAMES[2k], NAMES[2k+1]) never occur together in training,
so evaluation on them tests the rule, not memory. ``load_model`` returns the weights that
``python -m byhand.train_ioi`` trained with ``byhand`` itself and that ship in ``byhand/data``.
"""
from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from importlib import resources

import numpy as np

from byhand.checks import check_ids, check_text, float_params
from byhand.gpt import GPTConfig, gpt_forward, gpt_param_shapes

# Held-out pairs are neighbours in this list: (Mary, John), (Anna, Paul), ... never meet in training.
NAMES = ("Mary", "John", "Anna", "Paul", "Sarah", "David", "Emma", "Mark", "Laura", "James", "Kate", "Peter",
         "Alice", "Tom", "Rachel", "Daniel", "Julia", "Adam", "Lisa", "Steve", "Grace", "Ryan", "Helen", "Mike",
         "Nina", "Chris", "Sophie", "Frank", "Claire", "Henry")
PLACES = ("store", "park", "school", "beach", "office", "market", "station", "library", "garden", "hospital",
          "restaurant", "cafe", "museum", "zoo", "bank", "church", "farm", "lake", "gym", "theater")
OBJECTS = ("drink", "book", "ball", "bag", "cup", "key", "letter", "pen", "ring", "hat", "gift", "cake",
           "coin", "map", "box", "card", "flower", "kite", "plate", "sandwich", "bottle", "phone", "lamp", "snack")
VERBS = ("gave", "handed", "passed", "brought", "sent", "showed", "offered", "threw", "sold", "lent")
# {A} and {B} are the two names in order of first mention; {S} gives, {IO} receives.
TEMPLATES = (
    "When {A} and {B} went to the {place}, {S} {verb} a {obj} to {IO}",
    "Then, {A} and {B} had a long day at the {place}. {S} {verb} the {obj} to {IO}",
    "After {A} and {B} arrived at the {place}, {S} {verb} a {obj} to {IO}",
    "While {A} and {B} were working at the {place}, {S} {verb} the {obj} to {IO}",
    "{A} and {B} went to the {place}. {S} {verb} a {obj} to {IO}",
    "When {A} and {B} got a {obj} at the {place}, {S} decided to give it to {IO}",
    "Yesterday {A} and {B} met at the {place}, and {S} {verb} a {obj} to {IO}",
    "The {place} was busy when {A} and {B} came in. {S} {verb} the {obj} to {IO}",
)
SPECIALS = ("<bos>", "<eos>")
EXAMPLE = "When Mary and John went to the store, John gave a drink to"  # the book's running example; IO = Mary
_TOKEN = re.compile(r"<\w+>|\w+|[^\w\s]")  # a special, a word, or one punctuation mark


def tokenize(text: str) -> list[str]:
    """Split text into words and punctuation marks: "store, John" -> ["store", ",", "John"]."""
    return _TOKEN.findall(check_text("text", text))


@dataclass(frozen=True)
class Vocab:
    """A word-level vocabulary: id i is ``words[i]``; ids 0 and 1 are <bos> and <eos>."""

    words: tuple[str, ...]  # every token, in id order
    index: dict = field(init=False, repr=False, compare=False)  # word -> id, built from words

    def __post_init__(self):
        if not isinstance(self.words, tuple) or not all(isinstance(w, str) for w in self.words):
            raise ValueError(f"words must be a tuple of strings, got {type(self.words).__name__}"
                             + (" holding non-strings" if isinstance(self.words, tuple) else ""))
        if not self.words:
            raise ValueError("words is empty: a vocabulary needs at least one word")
        object.__setattr__(self, "index", {w: i for i, w in enumerate(self.words)})
        if len(self.index) != len(self.words):
            raise ValueError("vocabulary words must be unique")

    def __len__(self) -> int:
        return len(self.words)

    def encode(self, text: str, bos: bool = True, eos: bool = False) -> np.ndarray:
        """Token ids (T,) of ``text``, with <bos> first and <eos> last if asked; ValueError names an unknown word."""
        ids = [self.index["<bos>"]] if bos else []
        for word in tokenize(text):
            if word not in self.index:
                raise ValueError(f"unknown word {word!r}: it is not in the vocabulary of {len(self)} words")
            ids.append(self.index[word])
        if eos:
            ids.append(self.index["<eos>"])
        return np.array(ids, dtype=np.int64)

    def decode(self, ids) -> str:
        """Text of token ids, with punctuation attached to the word before it; ValueError for ids outside the vocabulary."""
        if np.size(ids) == 0:
            return ""
        text = " ".join(self.words[i] for i in check_ids("ids", ids, len(self)).ravel())
        return re.sub(r" ([,.])", r"\1", text)


def build_vocab() -> Vocab:
    """The vocabulary: specials, then every template word, names, places, objects and verbs (sorted groups)."""
    template_words = {w for t in TEMPLATES for w in tokenize(re.sub(r"\{\w+\}", " ", t))}
    words = SPECIALS + tuple(sorted(template_words)) + NAMES + PLACES + OBJECTS + VERBS
    return Vocab(tuple(dict.fromkeys(words)))  # dict.fromkeys: unique, order kept


@dataclass(frozen=True)
class IOISentence:
    """One generated sentence and its roles."""

    text: str  # the full sentence, ending with the IO name
    prompt: str  # the sentence without its last word (the model must predict IO)
    io: str  # indirect object: mentioned once, receives
    s: str  # subject: mentioned twice, gives
    template: int  # index into TEMPLATES
    io_first: bool  # True when IO is the first-mentioned name (ABBA order)


def name_pairs(split: str = "train") -> list[tuple[str, str]]:
    """Ordered (IO, S) pairs: "heldout" = both orders of (NAMES[2k], NAMES[2k+1]); "train" = every other pair."""
    held = {frozenset(NAMES[k:k + 2]) for k in range(0, len(NAMES), 2)}
    pairs = [(a, b) for a in NAMES for b in NAMES if a != b]
    if split == "heldout":
        return [p for p in pairs if frozenset(p) in held]
    if split == "train":
        return [p for p in pairs if frozenset(p) not in held]
    raise ValueError(f"split must be 'train' or 'heldout', got {split!r}")


def generate(n: int, seed: int, split: str = "train") -> list[IOISentence]:
    """``n`` sentences drawn with ``np.random.default_rng(seed)``: pair, template, order, place, object, verb.

    Prefix-stable: ``generate(n, seed)`` equals the first n sentences of ``generate(m, seed)`` for any m >= n,
    so a short training run sees exactly the first batches of a long one.
    """
    if not (isinstance(n, (int, np.integer)) and n >= 1):
        raise ValueError(f"n must be a positive integer, got {n!r}")
    pairs = name_pairs(split)
    rng = np.random.default_rng(seed)
    # row k holds sentence k's six choices; rows are drawn in order, which makes the stream prefix-stable
    sizes = [len(pairs), len(TEMPLATES), 2, len(PLACES), len(OBJECTS), len(VERBS)]
    pair, template, io_first, place, obj, verb = rng.integers(0, sizes, size=(n, len(sizes))).T  # each (n,)
    out = []
    for k in range(n):  # building strings; the model's arithmetic never loops over sentences
        io, s = pairs[pair[k]]
        a, b = (io, s) if io_first[k] else (s, io)
        text = TEMPLATES[template[k]].format(A=a, B=b, S=s, IO=io, place=PLACES[place[k]], obj=OBJECTS[obj[k]],
                                             verb=VERBS[verb[k]])
        out.append(IOISentence(text, text[: -len(io)].rstrip(), io, s, int(template[k]), bool(io_first[k])))
    return out


def encode_batch(texts, vocab: Vocab, eos: bool = True) -> tuple[np.ndarray, np.ndarray]:
    """Next-token training pairs: ids (B, T) and targets (B, T), right-padded; padded targets are -1 (ignored).

    For a sentence with tokens x_0 .. x_n (x_0 = <bos>), ids = x_0 .. x_{n-1} and targets = x_1 .. x_n.
    Padded ids repeat <eos>; the causal mask keeps them from touching the real positions.
    """
    if isinstance(texts, str):  # a lone string would be read character by character
        raise ValueError("texts must be a list of strings, got str")
    if len(texts) == 0:
        raise ValueError("texts is empty: there is no sentence to encode")
    seqs = [vocab.encode(t, bos=True, eos=eos) for t in texts]
    T = max(len(s) for s in seqs) - 1
    ids = np.full((len(seqs), T), vocab.index["<eos>"], dtype=np.int64)  # (B, T)
    targets = np.full((len(seqs), T), -1, dtype=np.int64)  # (B, T)
    for row, s in enumerate(seqs):  # ragged copy-in
        ids[row, : len(s) - 1] = s[:-1]
        targets[row, : len(s) - 1] = s[1:]
    return ids, targets


def evaluate(params: dict, config: GPTConfig, sentences, vocab: Vocab) -> dict:
    """Metrics of the model at the final "to" of each prompt, computed in float64.

    Returns a dict of numpy arrays: ``p_io`` and ``p_s`` (B,) probabilities of the two names, ``correct`` (B,)
    True when IO has the highest probability of all V words, and ``attn_io``, ``attn_s`` (n_layers, h, B): the
    attention weight each head's query at the last position puts on the IO token and on the S tokens (summed
    over both mentions of S).
    """
    p64 = _float64_params(params, config)
    if len(sentences) == 0:
        raise ValueError("sentences is empty: there is nothing to evaluate")
    if not all(isinstance(x, IOISentence) for x in sentences):
        raise ValueError("sentences must be IOISentence records (from generate), not "
                         f"{type(next(x for x in sentences if not isinstance(x, IOISentence))).__name__}")
    ids, _ = encode_batch([x.prompt for x in sentences], vocab, eos=True)  # prompt + <eos> -> ids = prompt
    rows = np.arange(len(sentences))
    last = (ids != vocab.index["<eos>"]).sum(axis=1) - 1  # (B,) position of the final "to"
    logits, cache = gpt_forward(p64, ids, config)  # (B, T, V)
    z = logits[rows, last]  # (B, V)
    p = np.exp(z - z.max(axis=1, keepdims=True))
    p /= p.sum(axis=1, keepdims=True)  # (B, V)
    io = np.array([vocab.index[x.io] for x in sentences])  # (B,)
    s = np.array([vocab.index[x.s] for x in sentences])  # (B,)
    P = np.stack([cache["trace"][f"block{i}.attn.A"] for i in range(config.n_layers)])  # (L, B, h, T, T)
    A = P[:, rows, :, last, :]  # (B, L, h, T): numpy puts the advanced axis first
    A = np.moveaxis(A, 0, 2)  # (L, h, B, T)
    attn_io = np.where(ids == io[:, None], A, 0.0).sum(axis=-1)  # (L, h, B)
    attn_s = np.where(ids == s[:, None], A, 0.0).sum(axis=-1)  # (L, h, B)
    return {"p_io": p[rows, io], "p_s": p[rows, s], "correct": p.argmax(axis=1) == io,
            "attn_io": attn_io, "attn_s": attn_s}


def next_word_probs(params: dict, config: GPTConfig, vocab: Vocab, prompt: str = EXAMPLE) -> dict[str, float]:
    """P(next word) after ``prompt`` (with <bos> in front), as word -> probability, computed in float64."""
    p64 = _float64_params(params, config)
    logits, _ = gpt_forward(p64, vocab.encode(prompt), config)  # (T, V)
    z = logits[-1] - logits[-1].max()  # (V,)
    p = np.exp(z) / np.exp(z).sum()  # (V,)
    return dict(zip(vocab.words, p.tolist()))


def _float64_params(params: dict, config: GPTConfig) -> dict[str, np.ndarray]:
    """The params checked against the config's table (names, shapes, NaN/inf), each as float64."""
    return {k: v.astype(np.float64, copy=False) for k, v in float_params(params, gpt_param_shapes(config)).items()}


def load_model(which: str = "final"):
    """The shipped IOI model in one call: (params, config, vocab, meta).

    which = "final" (trained to the end) or "mid" (the checkpoint where P(Mary) on EXAMPLE is near 0.68).
    params are float32 arrays; meta is the metadata record of the training run (config, seed, metrics).
    """
    if which not in ("final", "mid"):
        raise ValueError(f"which must be 'final' or 'mid', got {which!r}")
    data = resources.files("byhand") / "data"
    meta = json.loads((data / "ioi_meta.json").read_text())
    vocab = Vocab(tuple(json.loads((data / "ioi_vocab.json").read_text())))
    config = GPTConfig(**meta["config"])
    with (data / f"ioi_{which}.npz").open("rb") as f, np.load(f) as npz:
        params = {name: npz[name] for name in npz.files}
    return params, config, vocab, meta
