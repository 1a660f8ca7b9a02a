"""Load a GPT-2 checkpoint in the Hugging Face layout into ``byhand`` params, with its tokenizer.

Taught in Part IV, appendix "Running the book's code on GPT-2". ``byhand.gpt`` already does GPT-2's arithmetic, so
loading GPT-2 is renaming plus one split. A checkpoint folder holds ``config.json``, ``model.safetensors``
and (for text) ``tokenizer.json``. Hugging Face names and ``byhand`` names, for block i:

    wte.weight (V, d_model)            -> E            wpe.weight (T_max, d_model) -> P
    h.i.ln_1.weight / .bias            -> blocki.ln1.gamma / .beta    (ln_2 -> ln2, ln_f -> ln_f)
    h.i.attn.c_attn.weight (d, 3d)     -> [W_q | W_k | W_v]  split along the columns, in that order
    h.i.attn.c_attn.bias (3d,)         -> [b_q | b_k | b_v]
    h.i.attn.c_proj.weight / .bias     -> blocki.attn.W_o / .b_o
    h.i.mlp.c_fc.weight (d, d_ff)      -> blocki.ffn.W_1 (and .bias -> b_1)
    h.i.mlp.c_proj.weight (d_ff, d)    -> blocki.ffn.W_2 (and .bias -> b_2)
    lm_head.weight (V, d_model)        -> W_out = lm_head.weight^T, only when the embeddings are not tied

GPT-2's ``Conv1D`` stores its weight as (d_in, d_out) and computes ``y = x W + b``: the row convention of
this book, so no weight is transposed. A ``transformer.`` prefix (``save_pretrained`` of a
``GPT2LMHeadModel``) is stripped, and the causal-mask buffers ``h.i.attn.bias`` / ``.masked_bias`` that old
checkpoints carry are skipped. Dropout is not modelled: the numbers are those of ``model.eval()``.

``gpt2_figures`` runs the appendix's computations on a checkpoint folder (``byhand.six_ideas``) and sets each
result beside the figure that "The math inside a transformer" reports (``byhand.reported``), with the tolerance
that the figure's printed digits allow.

``safetensors``, ``tokenizers`` and ``huggingface_hub`` are optional: each is imported inside the function that
needs it, so ``import byhand`` never requires them.
"""
from __future__ import annotations

import json
import os
from dataclasses import dataclass
from decimal import Decimal, InvalidOperation
from importlib import resources
from pathlib import Path

import numpy as np

from byhand.checks import as_float, check_dict, check_finite, check_instance, check_params, float_dtype
from byhand.gpt import GPTConfig, gpt_forward, gpt_param_shapes
from byhand.reported import gpt2_source
from byhand.six_ideas import SixIdeas, six_ideas_numbers, summary
from byhand.softmax import log_softmax_forward

# Hugging Face activation name -> byhand GPTConfig.gelu; "gelu_new" is GPT-2's own tanh approximation
ACTIVATIONS = {"gelu_new": "tanh", "gelu_pytorch_tanh": "tanh", "gelu": "erf"}
ARCHITECTURES = ("GPT2LMHeadModel", "GPT2Model")  # checkpoints whose weights are this decoder and nothing else
FILES = ("config.json", "model.safetensors", "tokenizer.json")  # what download_gpt2 fetches
ENV_VAR = "BYHAND_GPT2_DIR"  # where default_gpt2_dir looks first
_IGNORED = ("attn.bias", "attn.masked_bias")  # causal-mask buffers, not parameters
_INSTALL = "pip install -r requirements-oracle.txt (or just safetensors, tokenizers, huggingface_hub)"


def config_from_hf(cfg: dict) -> GPTConfig:
    """The ``GPTConfig`` of a Hugging Face GPT-2 ``config.json`` (a dict); ValueError for anything else.

    Refused: another model_type or architecture, an activation byhand lacks, attention that is not scaled by
    1/sqrt(d_k) or is also scaled by 1/(layer index + 1), cross-attention. Missing switches take GPT-2's defaults.
    """
    if not isinstance(cfg, dict):
        raise ValueError(f"config must be a dict (the parsed config.json), got {type(cfg).__name__}")
    if cfg.get("model_type") != "gpt2":
        raise ValueError(f"unsupported model_type {cfg.get('model_type')!r}: only GPT-2 checkpoints ('gpt2') load")
    other = [a for a in cfg.get("architectures") or [] if a not in ARCHITECTURES]
    if other:
        raise ValueError(f"unsupported architecture(s) {other}: byhand loads {', '.join(ARCHITECTURES)}")
    act = cfg.get("activation_function", "gelu_new")
    if act not in ACTIVATIONS:
        raise ValueError(f"unsupported activation_function {act!r}: byhand has {', '.join(ACTIVATIONS)}")
    if not cfg.get("scale_attn_weights", True):
        raise ValueError("unsupported config: scale_attn_weights=False (byhand always divides scores by sqrt(d_k))")
    if cfg.get("scale_attn_by_inverse_layer_idx", False):
        raise ValueError("unsupported config: scale_attn_by_inverse_layer_idx=True (byhand scales by 1/sqrt(d_k) only)")
    if cfg.get("add_cross_attention", False):
        raise ValueError("unsupported config: add_cross_attention=True (byhand's GPT has no cross-attention)")
    # reorder_and_upcast_attn only changes the rounding of mixed-precision runs, not the function: accepted
    missing = [k for k in ("vocab_size", "n_positions", "n_embd", "n_layer", "n_head") if k not in cfg]
    if missing:
        raise ValueError(f"config.json lacks {', '.join(missing)}")
    d_model = cfg["n_embd"]
    d_ff = cfg.get("n_inner") or 4 * d_model  # n_inner = None means GPT-2's 4 d_model
    return GPTConfig(vocab_size=cfg["vocab_size"], context=cfg["n_positions"], d_model=d_model,
                     n_heads=cfg["n_head"], n_layers=cfg["n_layer"], d_ff=d_ff,
                     tie_weights=bool(cfg.get("tie_word_embeddings", True)),
                     ln_eps=float(cfg.get("layer_norm_epsilon", 1e-5)), gelu=ACTIVATIONS[act])


def hf_param_shapes(config: GPTConfig) -> dict[str, tuple[int, ...]]:
    """The Hugging Face parameter table of a GPT-2 with this config: name -> shape (no ``transformer.`` prefix)."""
    check_instance("config", config, GPTConfig)
    d, d_ff = config.d_model, config.d_ff
    shapes = {"wte.weight": (config.vocab_size, d), "wpe.weight": (config.context, d)}
    for i in range(config.n_layers):
        h = f"h.{i}."
        shapes.update({h + "ln_1.weight": (d,), h + "ln_1.bias": (d,),
                       h + "attn.c_attn.weight": (d, 3 * d), h + "attn.c_attn.bias": (3 * d,),
                       h + "attn.c_proj.weight": (d, d), h + "attn.c_proj.bias": (d,),
                       h + "ln_2.weight": (d,), h + "ln_2.bias": (d,),
                       h + "mlp.c_fc.weight": (d, d_ff), h + "mlp.c_fc.bias": (d_ff,),
                       h + "mlp.c_proj.weight": (d_ff, d), h + "mlp.c_proj.bias": (d,)})
    shapes.update({"ln_f.weight": (d,), "ln_f.bias": (d,)})
    if not config.tie_weights:
        shapes["lm_head.weight"] = (config.vocab_size, d)  # nn.Linear: (d_out, d_in), transposed on load
    return shapes


def _strip(tensors: dict) -> dict:
    """Drop the ``transformer.`` prefix and the mask buffers; keep lm_head.weight as it is."""
    out = {}
    for name, value in tensors.items():
        short = name[len("transformer."):] if name.startswith("transformer.") else name
        if short.startswith("h.") and short.split(".", 2)[-1] in _IGNORED:
            continue
        out[short] = value
    return out


def params_from_hf(tensors: dict, config: GPTConfig, dtype=np.float64) -> dict[str, np.ndarray]:
    """Rename (and split) Hugging Face GPT-2 arrays into ``byhand`` params of ``dtype``, checking every name and shape.

    tensors: name -> array, as read from model.safetensors. c_attn's (d_model, 3 d_model) weight is cut into
    three (d_model, d_model) column blocks W_q, W_k, W_v; its bias likewise. ValueError names any missing,
    unknown, misshapen or non-finite (NaN, inf) tensor, and a tied checkpoint whose lm_head.weight differs from
    wte.weight.
    """
    dtype = float_dtype(dtype)
    check_dict("tensors", tensors)
    t = _strip(tensors)
    want = hf_param_shapes(config)
    if config.tie_weights and "lm_head.weight" in t:  # a tied head saved anyway must be the embedding itself
        head = t.pop("lm_head.weight")
        if "wte.weight" in t and not np.array_equal(np.asarray(head), np.asarray(t["wte.weight"])):
            raise ValueError("config ties the embeddings, but lm_head.weight differs from wte.weight")
    missing = [n for n in want if n not in t]
    if missing:
        raise ValueError(f"checkpoint is missing tensor(s): {', '.join(missing[:6])}" + (" ..." if len(missing) > 6 else ""))
    unknown = sorted(set(t) - set(want))
    if unknown:
        raise ValueError(f"checkpoint has unexpected tensor(s): {', '.join(unknown[:6])}")
    for name, shape in want.items():
        if np.shape(t[name]) != shape:
            raise ValueError(f"tensor {name} must have shape {shape} for this config, got {np.shape(t[name])}")
    a = {}
    for n, v in t.items():
        with np.errstate(over="ignore"):  # an overflow of the cast is named just below
            a[n] = np.array(as_float(f"tensor {n}", v), dtype=dtype)  # fresh, writable, contiguous copies
        check_finite(f"tensor {n}", a[n])  # again after the cast: float64 -> float32 can overflow to inf
    d = config.d_model
    p = {"E": a["wte.weight"], "P": a["wpe.weight"]}
    for i in range(config.n_layers):
        h, b = f"h.{i}.", f"block{i}."
        p[b + "ln1.gamma"], p[b + "ln1.beta"] = a[h + "ln_1.weight"], a[h + "ln_1.bias"]
        W, bias = a[h + "attn.c_attn.weight"], a[h + "attn.c_attn.bias"]  # (d, 3d), (3d,)
        for j, (w_name, b_name) in enumerate((("W_q", "b_q"), ("W_k", "b_k"), ("W_v", "b_v"))):
            p[b + "attn." + w_name] = np.ascontiguousarray(W[:, j * d:(j + 1) * d])  # (d, d)
            p[b + "attn." + b_name] = bias[j * d:(j + 1) * d].copy()  # (d,)
        p[b + "attn.W_o"], p[b + "attn.b_o"] = a[h + "attn.c_proj.weight"], a[h + "attn.c_proj.bias"]
        p[b + "ln2.gamma"], p[b + "ln2.beta"] = a[h + "ln_2.weight"], a[h + "ln_2.bias"]
        p[b + "ffn.W_1"], p[b + "ffn.b_1"] = a[h + "mlp.c_fc.weight"], a[h + "mlp.c_fc.bias"]
        p[b + "ffn.W_2"], p[b + "ffn.b_2"] = a[h + "mlp.c_proj.weight"], a[h + "mlp.c_proj.bias"]
    p["ln_f.gamma"], p["ln_f.beta"] = a["ln_f.weight"], a["ln_f.bias"]
    if not config.tie_weights:
        p["W_out"] = np.ascontiguousarray(a["lm_head.weight"].T)  # (d_model, V): byhand's row convention
    return {name: p[name] for name in gpt_param_shapes(config)}  # byhand's table order


def params_to_hf(params: dict, config: GPTConfig) -> dict[str, np.ndarray]:
    """The inverse of ``params_from_hf``: byhand params -> Hugging Face names, Q/K/V fused back into c_attn."""
    check_params(params, gpt_param_shapes(config))
    p, out = params, {"wte.weight": params["E"], "wpe.weight": params["P"]}
    for i in range(config.n_layers):
        h, b = f"h.{i}.", f"block{i}."
        out[h + "ln_1.weight"], out[h + "ln_1.bias"] = p[b + "ln1.gamma"], p[b + "ln1.beta"]
        out[h + "attn.c_attn.weight"] = np.concatenate([p[b + "attn.W_" + x] for x in "qkv"], axis=1)  # (d, 3d)
        out[h + "attn.c_attn.bias"] = np.concatenate([p[b + "attn.b_" + x] for x in "qkv"])  # (3d,)
        out[h + "attn.c_proj.weight"], out[h + "attn.c_proj.bias"] = p[b + "attn.W_o"], p[b + "attn.b_o"]
        out[h + "ln_2.weight"], out[h + "ln_2.bias"] = p[b + "ln2.gamma"], p[b + "ln2.beta"]
        out[h + "mlp.c_fc.weight"], out[h + "mlp.c_fc.bias"] = p[b + "ffn.W_1"], p[b + "ffn.b_1"]
        out[h + "mlp.c_proj.weight"], out[h + "mlp.c_proj.bias"] = p[b + "ffn.W_2"], p[b + "ffn.b_2"]
    out["ln_f.weight"], out["ln_f.bias"] = p["ln_f.gamma"], p["ln_f.beta"]
    if not config.tie_weights:
        out["lm_head.weight"] = p["W_out"].T  # (V, d_model)
    return out


def _need(folder: Path, name: str, hint: str) -> Path:
    """The path of ``name`` inside ``folder``, or a FileNotFoundError that says how to get it."""
    if not folder.is_dir():
        raise FileNotFoundError(f"no checkpoint folder {folder}; {hint}")
    path = folder / name
    if not path.is_file():
        raise FileNotFoundError(f"no {name} in {folder}; {hint}")
    return path


def load_gpt2(path, dtype=np.float64) -> tuple[dict[str, np.ndarray], GPTConfig]:
    """Read config.json and model.safetensors from the folder ``path``: returns (params, config) for ``byhand.gpt``.

    Weights are read with ``safetensors.numpy`` (no torch) and converted to ``dtype`` (GPT-2 small: 124 M
    numbers, about 1 GB in float64 and 0.5 GB in float32).
    """
    folder = Path(path).expanduser()
    hint = "download_gpt2() fetches GPT-2, or save_pretrained(..., safe_serialization=True) writes one"
    with open(_need(folder, "config.json", hint)) as f:
        config = config_from_hf(json.load(f))
    weights = _need(folder, "model.safetensors", hint)
    try:
        from safetensors.numpy import load_file
    except ImportError as exc:
        raise ImportError(f"reading model.safetensors needs the safetensors package: {_INSTALL}") from exc
    return params_from_hf(load_file(str(weights)), config, dtype=dtype), config


@dataclass(frozen=True)
class HFTokenizer:
    """A ``tokenizers.Tokenizer`` with the small interface ``byhand.six_ideas`` uses: encode and decode."""

    tokenizer: object  # the tokenizers.Tokenizer read from tokenizer.json
    bos_id: int | None  # id put in front of every encoding (GPT-2: <|endoftext|>), None for none

    def encode(self, text: str) -> np.ndarray:
        """Token ids (T,) of ``text``, with ``bos_id`` first when it is set."""
        ids = self.tokenizer.encode(text, add_special_tokens=False).ids
        return np.array(([self.bos_id] if self.bos_id is not None else []) + list(ids), dtype=np.int64)

    def decode(self, ids) -> str:
        """The text of token ids, special tokens included (GPT-2 token strings keep their leading space)."""
        return self.tokenizer.decode([int(i) for i in np.asarray(ids).ravel()], skip_special_tokens=False)


def load_tokenizer(path, bos: bool = True) -> HFTokenizer:
    """The checkpoint's own tokenizer from ``path``/tokenizer.json, via the ``tokenizers`` package.

    bos=True puts config.json's ``bos_token_id`` (or, without config.json, the id of <|endoftext|>) in front
    of every encoding, as GPT-2's <|endoftext|> start token. FileNotFoundError when tokenizer.json is absent.
    """
    folder = Path(path).expanduser()
    file = _need(folder, "tokenizer.json", "download_gpt2() fetches it with the weights")
    try:
        from tokenizers import Tokenizer
    except ImportError as exc:
        raise ImportError(f"reading tokenizer.json needs the tokenizers package: {_INSTALL}") from exc
    tok = Tokenizer.from_file(str(file))
    bos_id = None
    if bos:
        cfg_file = folder / "config.json"
        cfg = json.loads(cfg_file.read_text()) if cfg_file.is_file() else {}
        bos_id = cfg.get("bos_token_id")
        bos_id = tok.token_to_id("<|endoftext|>") if bos_id is None else bos_id
        if bos_id is None or not 0 <= bos_id < tok.get_vocab_size(with_added_tokens=True):
            raise ValueError(f"bos=True, but {folder} names no start token inside the vocabulary (got {bos_id})")
    return HFTokenizer(tok, None if bos_id is None else int(bos_id))


def default_gpt2_dir() -> Path:
    """Where the book looks for GPT-2 small: $BYHAND_GPT2_DIR if set, else ~/.cache/byhand/gpt2."""
    return Path(os.environ.get(ENV_VAR) or "~/.cache/byhand/gpt2").expanduser()


def gpt2_files_present(path=None) -> bool:
    """True when ``path`` (default: ``default_gpt2_dir()``) holds config.json, model.safetensors and tokenizer.json."""
    folder = default_gpt2_dir() if path is None else Path(path).expanduser()
    return all((folder / name).is_file() for name in FILES)


def download_gpt2(name: str = "gpt2", dest=None) -> Path:
    """Fetch a GPT-2 checkpoint's three files from the Hugging Face Hub into ``dest`` (default ``default_gpt2_dir()``).

    Needs the internet and the huggingface_hub package; only a reader calls this, never the tests or the book
    build. Returns the folder, ready for ``load_gpt2`` and ``load_tokenizer``.
    """
    try:
        from huggingface_hub import hf_hub_download
    except ImportError as exc:
        raise ImportError(f"downloading needs the huggingface_hub package: {_INSTALL}") from exc
    folder = default_gpt2_dir() if dest is None else Path(dest).expanduser()
    folder.mkdir(parents=True, exist_ok=True)
    for file in FILES:
        hf_hub_download(repo_id=name, filename=file, local_dir=str(folder))
    return folder


# ---- The appendix's figures from a checkpoint folder, beside the reported ones ----------------------------------

LAYER, HEAD = 9, 9  # head 9.9 of GPT-2 small (layer, head, from 0): the one "The math inside a transformer" uses
SUBJECT = " John"  # the name that should lose
STEPS = 10  # the reported run takes ten plain gradient steps
SETTINGS = ("learning rate",)  # reported inputs of the run, not results: shown, never compared
SENTENCE = ("words in the sentence", "P(sentence)", "-log P(sentence)")  # depend on how the tokens are counted
# Two float32 programs (the article's and this one) sum in different orders. Float32 keeps about 7 significant
# digits, so after 12 layers a logit near -100 is good to about 1e-4 (an estimate): 1 % of the last printed unit of
# the logit gap (0.01). The tolerance widens half a printed unit by 5 % of a unit, so that round-off alone does not
# flip a figure across a rounding edge.
SLACK = 0.05


def printed_tolerance(printed: str) -> float:
    """How far a value may lie from a figure printed as ``printed`` and still round to it.

    Half a unit in the last printed digit, plus ``SLACK`` of a unit: "0.30" -> 0.0055, "2.8e-24" -> 5.5e-26,
    "14" -> 0.55 (a count must match exactly). ValueError for anything that is not a finite decimal numeral.
    """
    if not isinstance(printed, str):
        raise ValueError(f"printed must be the figure as a string of digits, got {type(printed).__name__}")
    try:
        d = Decimal(printed.strip())
    except InvalidOperation:
        raise ValueError(f"printed {printed!r} is not a decimal numeral") from None
    if not d.is_finite():
        raise ValueError(f"printed {printed!r} is not finite")
    return (0.5 + SLACK) * 10.0 ** d.as_tuple().exponent


def reported_as_printed() -> dict[str, str]:
    """Every figure of ``byhand.reported.gpt2_reported()`` as its source prints it, trailing zeros kept ("0.30")."""
    text = resources.files("byhand").joinpath("data/gpt2_reported.json").read_text(encoding="utf-8")
    figures = json.loads(text, parse_float=str, parse_int=str)["figures"]  # numerals kept as written
    return {name: f["value"] for name, f in figures.items()}


@dataclass(frozen=True)
class Figure:
    """One reported figure beside the value computed here."""

    name: str  # its key in byhand.reported.gpt2_reported()
    printed: str  # as the source prints it
    computed: float  # the value computed here
    tolerance: float  # printed_tolerance(printed)
    setting: bool  # an input of the run (the learning rate), shown but not compared

    @property
    def agrees(self) -> bool:
        """True when the computed value rounds to the printed figure (within the tolerance); settings always agree."""
        return self.setting or abs(self.computed - float(self.printed)) <= self.tolerance


@dataclass(frozen=True)
class GPT2Figures:
    """The appendix's computations on one checkpoint, and every reported figure beside its computed value."""

    figures: tuple[Figure, ...]  # in the order of gpt2_reported()
    counting: str  # how the sentence's tokens were counted for SENTENCE's figures (a key of ``sentence``)
    sentence: dict  # counting -> (number of factors, -log P(sentence)), for every way of counting
    run: SixIdeas  # everything six_ideas_numbers computed

    @property
    def disagree(self) -> tuple[Figure, ...]:
        """The figures whose computed value does not round to the printed one."""
        return tuple(f for f in self.figures if not f.agrees)


def sentence_countings(params: dict, config: GPTConfig, tokenizer: HFTokenizer, text: str) -> dict:
    """-log P(text) counted four ways: counting -> (number of next-token factors, summed cost).

    "start token, every token": <|endoftext|> in front, every token of ``text`` predicted.
    "start token, the answer left out": the same without the last token's factor (the prompt's words alone).
    "start token, first word left out": the same without the first word's factor.
    "no start token": ``text`` alone, every token after the first predicted (GPT-2's usual loss).
    """
    check_instance("tokenizer", tokenizer, HFTokenizer)
    if tokenizer.bos_id is None:
        raise ValueError("tokenizer has no start token: load it with load_tokenizer(path, bos=True)")
    out = {}
    for name, bos_id in (("start token", tokenizer.bos_id), ("no start token", None)):
        ids = HFTokenizer(tokenizer.tokenizer, bos_id).encode(text)  # (T,)
        if ids.size < 2 or ids.size > config.context:
            raise ValueError(f"text must encode to 2 .. {config.context} tokens, got {ids.size}")
        logits, _ = gpt_forward(params, ids[None, :-1], config)  # (1, T - 1, V): position t predicts t + 1
        logp, _ = log_softmax_forward(logits[0])  # (T - 1, V)
        cost = -logp[np.arange(ids.size - 1), ids[1:]].astype(np.float64)  # (T - 1,)
        if bos_id is None:
            out[name] = (cost.size, float(cost.sum()))
        else:
            out[name + ", every token"] = (cost.size, float(cost.sum()))
            out[name + ", the answer left out"] = (cost.size - 1, float(cost[:-1].sum()))
            out[name + ", first word left out"] = (cost.size - 1, float(cost[1:].sum()))
    return out


def gpt2_figures(path, layer: int = LAYER, head: int = HEAD, dtype=np.float32) -> GPT2Figures:
    """Load the checkpoint folder ``path``, run the appendix's computations, and set them beside the reported figures.

    The prompt, answer, learning rate and step count are the source's (``gpt2_source``, ``reported_as_printed``);
    ``layer``/``head`` default to head 9.9, which only GPT-2 small has. The three figures of ``SENTENCE`` take the
    first way of counting (``sentence_countings``) whose number of factors and cost both agree with the reported
    ones, or, when none does, the first with the reported number of factors, else the first. Every other figure,
    the cost of one word of the sentence included, comes from the run with the start token in front.
    """
    params, config = load_gpt2(path, dtype=dtype)
    tokenizer = load_tokenizer(path)
    source, printed = gpt2_source(), reported_as_printed()
    run = six_ideas_numbers(params, config, tokenizer, source["prompt"], source["answer"], layer=layer, head=head,
                            lr=float(printed["learning rate"]), steps=STEPS, subject=SUBJECT)
    computed = summary(run)  # six_ideas_numbers leaves params as they were: the sentence is scored before any step
    ways = sentence_countings(params, config, tokenizer, source["prompt"] + source["answer"])

    def sentence_values(way):
        n, cost = ways[way]
        values = {"words in the sentence": n, "P(sentence)": float(np.exp(-cost)), "-log P(sentence)": cost}
        return values, all(abs(values[k] - float(printed[k])) <= printed_tolerance(printed[k])
                           for k in SENTENCE if k in printed)

    order = list(ways)
    counting = next((w for w in order if sentence_values(w)[1]), None)
    if counting is None:
        n_printed = printed.get("words in the sentence")
        counting = next((w for w in order if str(ways[w][0]) == n_printed), order[0])
    computed.update(sentence_values(counting)[0])
    missing = [k for k in printed if k not in computed]
    if missing:
        raise ValueError(f"no computed value for the reported figure(s) {', '.join(missing)}")
    figures = tuple(Figure(k, printed[k], float(computed[k]), printed_tolerance(printed[k]), k in SETTINGS)
                    for k in printed)
    return GPT2Figures(figures=figures, counting=counting, sentence=ways, run=run)
