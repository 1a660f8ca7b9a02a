"""The view behind Part IV, "Inside the trained model": one sentence, one head's attention row, P(IO).

For each sentence b the model reads the prompt (it ends with the final "to", at position t_b) and

    a_b = P[layer][b, head, t_b, :]     (T,)  the head's attention from the final "to" to every earlier token
    p_b = softmax(z_b),  z_b = logits at t_b   (V,)  P(IO) = p_b[IO], P(S) = p_b[S]

``run_sentences`` does the forward pass once for a list of sentences and one checkpoint (the slow part);
``inside_state`` is the widget callback and only picks one sentence's numbers (microseconds);
``draw_inside`` draws the attention row as bars, the IO name in blue and the S name in red; a move of the widget
redraws only the bars, the words and the title, on axes made for the longest sentence (``byhand.live``).
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ..gpt import GPTConfig, gpt_forward
from ..ioi import IOISentence, Vocab, encode_batch, tokenize
from ..softmax import softmax_forward
from . import fmt, make_view


@dataclass(frozen=True)
class SentenceRun:
    """One checkpoint's numbers for a list of sentences, computed in one batched forward pass (float64)."""

    sentences: tuple[IOISentence, ...]  # (B,) the sentences, with their roles
    words: tuple[tuple[str, ...], ...]  # (B,) each prompt's tokens, <bos> first
    layer: int  # the block of the head, counted from 0
    head: int  # the head within the block, counted from 0
    attn: np.ndarray  # (B, T) the head's attention row from each final "to"; zero past the prompt's end
    p_io: np.ndarray  # (B,) P(IO) at the final "to"
    p_s: np.ndarray  # (B,) P(S) at the final "to"
    top: tuple[str, ...]  # (B,) the most likely next word


def run_sentences(params: dict, config: GPTConfig, vocab: Vocab, sentences, layer: int, head: int) -> SentenceRun:
    """Run the model on every prompt at once and keep the head's final row and the two names' probabilities."""
    sentences = tuple(sentences)
    if not sentences:
        raise ValueError("give at least one sentence")
    if not (0 <= layer < config.n_layers and 0 <= head < config.n_heads):
        raise ValueError(f"layer {layer}, head {head} is outside the model ({config.n_layers} x {config.n_heads})")
    p64 = {k: np.asarray(v, dtype=np.float64) for k, v in params.items()}
    ids, _ = encode_batch([x.prompt for x in sentences], vocab, eos=True)  # (B, T): the prompts, padded
    rows = np.arange(len(sentences))
    last = np.array([len(tokenize(x.prompt)) for x in sentences])  # (B,) position of the final "to" (<bos> is 0)
    logits, cache = gpt_forward(p64, ids, config)  # (B, T, V)
    z = logits[rows, last]  # (B, V)
    p, _ = softmax_forward(z)  # (B, V)
    attn = cache["trace"][f"block{layer}.attn.A"][rows, head, last]  # (B, T)
    io = np.array([vocab.index[x.io] for x in sentences])
    s = np.array([vocab.index[x.s] for x in sentences])
    words = tuple(("<bos>",) + tuple(tokenize(x.prompt)) for x in sentences)
    top = tuple(vocab.words[i] for i in p.argmax(axis=1))
    return SentenceRun(sentences, words, int(layer), int(head), attn, p[rows, io], p[rows, s], top)


@dataclass(frozen=True)
class InsideState:
    """What the view shows for one sentence."""

    label: str  # the checkpoint's name, e.g. "mid"
    words: tuple[str, ...]  # (T_b,) the prompt's tokens, <bos> first
    attn: np.ndarray  # (T_b,) the head's attention from the final "to"; sums to 1
    io_pos: tuple[int, ...]  # positions of the IO name
    s_pos: tuple[int, ...]  # positions of the S name (two mentions)
    attn_io: float  # attention on IO
    attn_s: float  # attention on S, both mentions
    p_io: float  # P(IO)
    p_s: float  # P(S)
    top: str  # the most likely next word
    layer: int
    head: int


def inside_state(runs: dict, checkpoint: str, index: int) -> InsideState:
    """Pick sentence ``index`` from ``runs[checkpoint]`` (a SentenceRun); no model arithmetic happens here."""
    if checkpoint not in runs:
        raise ValueError(f"unknown checkpoint {checkpoint!r}; the runs are {sorted(runs)}")
    run = runs[checkpoint]
    if not 0 <= index < len(run.sentences):
        raise ValueError(f"sentence index {index} is outside 0..{len(run.sentences) - 1}")
    words = run.words[index]
    x = run.sentences[index]
    attn = run.attn[index, : len(words)]  # (T_b,)
    io_pos = tuple(t for t, w in enumerate(words) if w == x.io)
    s_pos = tuple(t for t, w in enumerate(words) if w == x.s)
    return InsideState(checkpoint, words, attn, io_pos, s_pos, float(attn[list(io_pos)].sum()),
                       float(attn[list(s_pos)].sum()), float(run.p_io[index]), float(run.p_s[index]),
                       run.top[index], run.layer, run.head)


def draw_inside(fig, state: InsideState, n_max: int | None = None):
    """The head's attention row as one bar per token: IO blue, S red, the rest grey; P(IO) in the title.

    The axes have room for ``n_max`` tokens (the longest prompt a widget can show; default this prompt's length),
    so that choosing another sentence moves the bars, the words under them and the title, never the axes. Returns
    ``update(state)``, which does that move and returns those artists (``byhand.live`` redraws only them); the
    positions past the prompt's end keep a hidden bar and an empty word.
    """
    from matplotlib.transforms import ScaledTranslation

    n_max = len(state.words) if n_max is None else n_max
    if n_max < len(state.words):
        raise ValueError(f"n_max = {n_max} is shorter than the prompt's {len(state.words)} tokens")
    ax = fig.subplots()
    x = np.arange(n_max)
    bars = ax.bar(x, np.zeros(n_max))
    ax.set_xlim(-0.6, n_max - 0.4)
    ax.set_xticks([])  # the words are moving texts: a tick label would be still
    ax.tick_params(axis="y", labelsize=9)
    ax.set_ylim(0, 1.3)  # room above 1 for the legend
    ax.set_yticks([0, 0.25, 0.5, 0.75, 1])
    ax.set_ylabel("attention from the final “to”", fontsize=9)
    from matplotlib.patches import Patch  # the legend is static: drawn once, never touched by update

    ax.legend(handles=[Patch(color="tab:blue", label="IO (the name said once)"),
                       Patch(color="tab:red", label="S (the repeated name)"),
                       Patch(color="tab:gray", label="other tokens")],
              loc="upper right", ncol=3, fontsize=9, frameon=False)
    title = ax.set_title("", fontsize=9)
    under = ax.get_xaxis_transform() + ScaledTranslation(0, -3.5 / 72, fig.dpi_scale_trans)  # a tick label's place
    words = [ax.text(k, 0, "", transform=under, rotation=60, ha="right", va="top", rotation_mode="anchor",
                     fontsize=9) for k in x]
    fig.subplots_adjust(left=0.09, right=0.98, bottom=0.3, top=0.85)

    def update(new: InsideState) -> list:
        n = len(new.words)
        if n > n_max:
            raise ValueError(f"the prompt has {n} tokens; the axes were made for {n_max}")
        colors = np.full(n, "tab:gray", dtype=object)
        colors[list(new.io_pos)] = "tab:blue"
        colors[list(new.s_pos)] = "tab:red"
        for k, (bar, word) in enumerate(zip(bars, words)):
            shown = k < n
            bar.set_visible(shown)
            word.set_visible(shown)
            if shown:
                bar.set_height(new.attn[k])
                bar.set_color(colors[k])
                word.set_text(new.words[k])
        title.set_text(f"{new.label} checkpoint, head {new.layer}.{new.head}: on IO {new.attn_io:.2f}, "
                       f"on S {new.attn_s:.2f}\nP(IO) = {new.p_io:.3f}, top word “{new.top}”")
        return [*bars, *words, title]

    update(state)
    return update


def describe_inside(s: InsideState) -> str:
    """The figure in words: the sentence, the head's weight on the two names, P(IO) and the top word."""
    io, sub = s.words[s.io_pos[0]], s.words[s.s_pos[0]]
    return (f"Bar chart of the attention of head {s.layer}.{s.head} at the {s.label} checkpoint, from the final "
            f"“to” to each of the {len(s.words)} tokens of “{' '.join(s.words[1:])}”: the indirect object “{io}” "
            f"gets {fmt(s.attn_io)}, the subject “{sub}” {fmt(s.attn_s)} over its two mentions. "
            f"P({io}) = {fmt(s.p_io, 3)}, P({sub}) = {fmt(s.p_s, 3)}; the most likely next word is “{s.top}”.")


def table_inside(s: InsideState):
    """The figure's data: the head's attention on each token."""
    return ["position", "token", "attention"], [[t, w, a] for t, (w, a) in enumerate(zip(s.words, s.attn))]


def inside_view(runs: dict):
    """Return ``draw(fig, setting)``; ``setting`` has keys "sentence" (an index) and "checkpoint" (a key of runs).

    The axes hold the longest prompt of every run, so that no choice of sentence or checkpoint moves them.
    ``draw`` returns ``update(setting)`` for ``byhand.live``.
    """
    n_max = max(len(w) for run in runs.values() for w in run.words)

    def state(setting: dict) -> InsideState:
        return inside_state(runs, setting["checkpoint"], setting["sentence"])

    return make_view(state, draw_inside, n_max, describe=describe_inside, table=table_inside)
