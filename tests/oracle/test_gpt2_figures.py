"""The appendix's GPT-2 path end to end, on a tiny GPT-2 that transformers writes to a temporary folder.

``byhand.gpt2.gpt2_figures(folder)`` loads a checkpoint folder, runs the appendix's computations and sets every
reported figure beside its computed value. Here the folder holds a GPT2LMHeadModel with 2 layers, 2 heads and
width 16 (random init, fixed seed, saved with ``save_pretrained``) and a byte-level BPE tokenizer trained offline
on a few sentences. Every figure is recomputed from transformers' own forward (logits, probabilities, the head's
attention row, its queries and keys from c_attn's output) and from torch.optim.SGD, and must match byhand's to
1e-9 relative in float64 (1e-4 in float32, the appendix's dtype).

Then the comparison is tested: a stand-in article whose figures are transformers' values printed with the real
article's digits must agree everywhere, a figure moved by two printed units must not, and the sentence's figures
must pick the way of counting tokens that the stand-in used. Last, the appendix page itself runs on a tiny GPT-2
that has a head 9.9, as `make check-gpt2` runs it: it must show the computed column and stop at its check.
"""
import json
from decimal import Decimal
from pathlib import Path

import numpy as np
import pytest
from test_gpt2_parity import SENTENCES, hf, tiny_tokenizer  # noqa: F401 (hf is a fixture)

from byhand import gpt2
from byhand.reported import gpt2_source

LAYER, HEAD = 1, 1  # the tiny model's stand-in for head 9.9


@pytest.fixture(scope="module")
def folder(hf, torch, tmp_path_factory):
    """The tiny checkpoint folder: config.json and model.safetensors (float64) from transformers, tokenizer.json."""
    path = tmp_path_factory.mktemp("tiny_gpt2")
    tok = tiny_tokenizer(path)
    bos = tok.token_to_id("<|endoftext|>")
    cfg = hf.GPT2Config(n_layer=2, n_head=2, n_embd=16, vocab_size=tok.get_vocab_size(), n_positions=32,
                        initializer_range=0.3, bos_token_id=bos, eos_token_id=bos, attn_implementation="eager")
    torch.manual_seed(2019)  # transformers' own random init, at a scale where the scores are far from uniform
    model = hf.GPT2LMHeadModel(cfg).double().eval()
    model.save_pretrained(path, safe_serialization=True)
    return path


@pytest.fixture(scope="module")
def reference(hf, torch, folder):
    """Every reported figure computed by transformers and torch alone, under the names of gpt2_reported()."""
    model = hf.GPT2LMHeadModel.from_pretrained(folder, attn_implementation="eager").double().eval()
    tok = hf.PreTrainedTokenizerFast(tokenizer_file=str(folder / "tokenizer.json"))
    src = gpt2_source()
    bos = model.config.bos_token_id
    prompt = [bos] + tok.encode(src["prompt"], add_special_tokens=False)
    a, = tok.encode(src["prompt"] + src["answer"], add_special_tokens=False)[len(prompt) - 1:]
    john, = tok.encode(src["prompt"] + " John", add_special_tokens=False)[len(prompt) - 1:]
    ids = torch.tensor([prompt])

    captured = {}  # c_attn's output (1, T, 3d) of the stand-in head's layer: its queries and keys
    hook = model.transformer.h[LAYER].attn.c_attn.register_forward_hook(lambda m, i, o: captured.update(qkv=o))
    with torch.no_grad():
        out = model(input_ids=ids, output_attentions=True)
    hook.remove()
    z = out.logits[0, -1].numpy()  # (V,)
    p = torch.softmax(out.logits[0, -1], dim=-1).numpy()
    rival = int(np.argmax(np.where(np.arange(p.size) == a, -np.inf, p)))
    d, n_head = model.config.n_embd, model.config.n_head
    dk = d // n_head
    qkv = captured["qkv"][0].numpy()  # (T, 3d)
    q = qkv[-1, HEAD * dk:(HEAD + 1) * dk]  # the last position's query, this head's slice
    K = qkv[:, d + HEAD * dk:d + (HEAD + 1) * dk]  # (T, dk) every position's key
    raw = K @ q
    key = prompt.index(a)  # the answer's first mention
    row = out.attentions[LAYER][0, HEAD, -1].numpy()  # the head's real attention row, after the scaling
    ref = {"q.k at the answer": raw[key], "raw score at position 0": raw[0],
           "raw share of the answer": np.exp(raw[key] - raw.max()) / np.exp(raw - raw.max()).sum(),
           "scaled share of the answer": row[key], "scaled share of position 0": row[0],
           "scaled share of the subject": row[[t for t, i in enumerate(prompt) if i == john]].sum(),
           "logit of the answer": z[a], "mean logit": z.mean(), "logit gap to the runner-up": z[a] - z[rival],
           "P(answer)": p[a], "P(runner-up)": p[rival], "P(subject)": p[john], "loss = -log P(answer)": -np.log(p[a]),
           "dloss/dz of the answer": p[a] - 1.0, "learning rate": 2e-5}

    the, drink = (tok.encode(src["prompt"] + w, add_special_tokens=False)[len(prompt) - 1] for w in (" the", " drink"))
    ref.update({"ratio of the answer to the runner-up": p[a] / p[rival], "smallest P": p.min(),
                "loss if the subject were the answer": -np.log(p[john]), "dloss/dz of the runner-up": p[rival],
                "dloss/dz of ' the'": p[the], "dloss/dz of the subject": p[john]})  # p - y, y = 0 off the answer

    ways = {}  # the sentence counted four ways, from transformers' logits
    for name, start in (("start token", [bos]), ("no start token", [])):
        full = torch.tensor([start + tok.encode(src["prompt"] + src["answer"], add_special_tokens=False)])
        with torch.no_grad():
            logp = torch.log_softmax(model(input_ids=full).logits[0, :-1], dim=-1)
        cost = -logp[torch.arange(full.shape[1] - 1), full[0, 1:]].numpy()
        if start:  # one word's cost: the first t >= 1 where the sentence has it, predicted from position t - 1
            for key, i in (("the answer's first mention", a), ("' drink'", drink)):
                t = full[0].tolist().index(i, 1)
                ref[f"P of {key}"], ref[f"cost of {key}"] = np.exp(-cost[t - 1]), cost[t - 1]
            ways["start token, every token"] = (cost.size, cost.sum())
            ways["start token, the answer left out"] = (cost.size - 1, cost[:-1].sum())
            ways["start token, first word left out"] = (cost.size - 1, cost[1:].sum())
        else:
            ways["no start token"] = (cost.size, cost.sum())

    opt = torch.optim.SGD(model.parameters(), lr=2e-5)  # the reported run: plain SGD on the final-position loss
    for step in range(1, 11):
        opt.zero_grad()
        loss = torch.nn.functional.cross_entropy(model(input_ids=ids).logits[0, -1:], torch.tensor([a]))
        loss.backward()
        opt.step()
        if step in (1, 10):
            with torch.no_grad():
                p_a = torch.softmax(model(input_ids=ids).logits[0, -1], dim=-1)[a].item()
            s = "s" * (step > 1)
            ref[f"loss after {step} step{s}"], ref[f"P(answer) after {step} step{s}"] = -np.log(p_a), p_a
    return {k: float(v) for k, v in ref.items()}, ways


def with_ways(ref, ways, way):
    n, cost = ways[way]
    return {**ref, "words in the sentence": n, "P(sentence)": float(np.exp(-cost)), "-log P(sentence)": float(cost)}


def printed_like_the_article(values):
    """Each value rounded to the digits that the article prints for the same figure (its last digit's place)."""
    out = {}
    for name, text in gpt2.reported_as_printed().items():
        place = Decimal(1).scaleb(Decimal(text).as_tuple().exponent)
        out[name] = str(Decimal(repr(values[name])).quantize(place)) if name != "learning rate" else text
    return out


@pytest.mark.parametrize("dtype, rtol", [(np.float64, 1e-9), (np.float32, 1e-4)])
def test_every_figure_matches_transformers(reference, folder, dtype, rtol):
    ref, ways = reference
    r = gpt2.gpt2_figures(folder, layer=LAYER, head=HEAD, dtype=dtype)
    assert [f.name for f in r.figures] == list(gpt2.reported_as_printed())
    assert r.run.final.tokens[0] == "<|endoftext|>" and r.run.final.answer == " Mary"
    for way, (n, cost) in ways.items():  # all four ways of counting the sentence
        assert r.sentence[way][0] == n and abs(r.sentence[way][1] - cost) <= rtol * cost, way
    want = with_ways(ref, ways, r.counting)
    bad = {f.name: (f.computed, want[f.name]) for f in r.figures
           if not abs(f.computed - want[f.name]) <= rtol * abs(want[f.name]) + 1e-12}
    assert not bad, f"byhand and transformers differ: {bad}"
    # the stand-in head's row is far from uniform, so its figures test the head path, not only an average
    assert r.run.head.share_scaled.max() > 2 / len(r.run.final.tokens)


def test_the_comparison_against_a_stand_in_article(reference, folder, monkeypatch):
    ref, ways = reference
    way = "no start token"  # the stand-in article counts the sentence without a start token
    article = printed_like_the_article(with_ways(ref, ways, way))
    monkeypatch.setattr(gpt2, "reported_as_printed", lambda: article)
    r = gpt2.gpt2_figures(folder, layer=LAYER, head=HEAD, dtype=np.float64)
    assert r.counting == way
    assert r.disagree == (), [(f.name, f.printed, f.computed) for f in r.disagree]
    setting, = (f for f in r.figures if f.setting)
    assert setting.name == "learning rate"

    moved = dict(article)  # one figure two printed units off, a count no way of counting gives: both caught
    place = 10.0 ** Decimal(article["P(answer)"]).as_tuple().exponent
    moved["P(answer)"] = str(Decimal(article["P(answer)"]) + Decimal(2) * Decimal(str(place)))
    moved["words in the sentence"] = str(ways[way][0] + 5)  # no way of counting gives that many
    monkeypatch.setattr(gpt2, "reported_as_printed", lambda: moved)
    r = gpt2.gpt2_figures(folder, layer=LAYER, head=HEAD, dtype=np.float64)
    assert {f.name for f in r.disagree} >= {"P(answer)", "words in the sentence"}
    assert not {f.name for f in r.disagree} - {"P(answer)", "words in the sentence", "P(sentence)", "-log P(sentence)"}


def test_the_appendix_runs_a_checkpoint_folder_and_stops_on_a_disagreement(hf, torch, tmp_path, monkeypatch):
    """The appendix itself, as `make check-gpt2` runs it, on a tiny GPT-2 with a layer 9 and a head 9.

    Its random figures cannot round to GPT-2 small's, so the page must show the computed column, then stop at its
    check cell and name the figures that disagree: the failure the online job reports.
    """
    import jupytext
    from nbclient import NotebookClient
    from nbclient.exceptions import CellExecutionError

    tok = tiny_tokenizer(tmp_path)
    bos = tok.token_to_id("<|endoftext|>")
    cfg = hf.GPT2Config(n_layer=10, n_head=10, n_embd=20, vocab_size=tok.get_vocab_size(), n_positions=32,
                        bos_token_id=bos, eos_token_id=bos)
    torch.manual_seed(0)
    hf.GPT2LMHeadModel(cfg).save_pretrained(tmp_path, safe_serialization=True)
    monkeypatch.setenv("BYHAND_GPT2_DIR", str(tmp_path))  # the kernel inherits it
    nb = jupytext.read(Path(__file__).resolve().parents[2] / "book" / "49_gpt2.md")
    with pytest.raises(CellExecutionError, match="computed figures that do not round to the reported ones"):
        NotebookClient(nb, timeout=600, kernel_name="python3").execute()
    outputs = [json.dumps(o, ensure_ascii=False) for c in nb.cells if c.cell_type == "code" for o in c.get("outputs", [])]
    assert any("computed here" in o and "rounds to the reported figure" in o for o in outputs)  # the table
    assert any("found GPT-2 small’s files and ran it" in o for o in outputs)  # the status sentence
    assert not any("was built without GPT-2 small’s files" in o for o in outputs)
