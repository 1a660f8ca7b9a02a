"""byhand.gpt2 against the reference implementation: Hugging Face transformers' GPT2LMHeadModel and torch autograd.

Tiny random GPT-2s (2-3 layers, width 16-32, float64) are saved with ``save_pretrained`` into a temporary folder,
read back with ``byhand.gpt2.load_gpt2`` (safetensors, no torch), and compared on several batches:

  logits                          max |byhand - HF| <= 1e-10 * max|logits|      (float64 both sides)
  loss (float64, from HF logits)  |byhand - torch| <= 1e-12 relative
  loss (HF's own labels= path)    <= 1e-6 relative: transformers' ForCausalLMLoss casts logits to float32
  every parameter's gradient      max |byhand - autograd| <= 1e-9 * max|autograd| + 1e-12  (HF names mapped by hand)

The absolute 1e-12 is for the key biases b_k, whose gradient is exactly 0 in exact arithmetic (adding q . b_k to
every score of a row does not change its softmax): both sides return round-off there, near 1e-17.

Skipped when transformers is missing, an error when BYHAND_REQUIRE_ORACLE=1 (as for torch in conftest.py).
"""
import importlib
import os

import numpy as np
import pytest

from byhand import gpt2
from byhand.gpt import gpt_forward, gpt_loss_and_grads, gpt_param_shapes
from byhand.six_ideas import six_ideas_numbers

RTOL_LOGITS, RTOL_LOSS, RTOL_GRAD, ATOL_GRAD = 1e-10, 1e-12, 1e-9, 1e-12
# (config overrides, attention implementation): tied and untied heads, the three GELU names, n_inner, ln eps
CASES = [
    (dict(n_layer=2, n_embd=24, n_head=3, activation_function="gelu_new"), "eager"),
    (dict(n_layer=3, n_embd=16, n_head=4, n_inner=40, layer_norm_epsilon=1e-3, activation_function="gelu",
          tie_word_embeddings=False), "sdpa"),
    (dict(n_layer=2, n_embd=32, n_head=2, activation_function="gelu_pytorch_tanh"), "eager"),
]
BATCH_SHAPES = [(3, 9), (2, 16), (1, 2)]  # batch > 1, different lengths, the full context of 16


@pytest.fixture(scope="module")
def hf(torch):
    """transformers: a skip when it is missing, an error when BYHAND_REQUIRE_ORACLE=1."""
    if os.environ.get("BYHAND_REQUIRE_ORACLE") == "1":
        return importlib.import_module("transformers")
    return pytest.importorskip("transformers")


def random_gpt2(hf, torch, folder, vocab_size=37, n_positions=16, attn="eager", **overrides):
    """A GPT2LMHeadModel in float64 with O(1) random weights (so every path matters), saved into ``folder``."""
    cfg = hf.GPT2Config(vocab_size=vocab_size, n_positions=n_positions, bos_token_id=0, eos_token_id=0,
                        attn_implementation=attn, **overrides)
    model = hf.GPT2LMHeadModel(cfg).double().eval()  # eval: no dropout, as byhand
    gen = torch.Generator().manual_seed(0)
    with torch.no_grad():
        for name, p in model.named_parameters():
            gamma = name.endswith(("ln_1.weight", "ln_2.weight", "ln_f.weight"))
            p.copy_((1.0 if gamma else 0.0) + 0.3 * torch.randn(p.shape, generator=gen, dtype=torch.float64))
    model.save_pretrained(folder, safe_serialization=True)
    return model


def hf_grads_as_byhand(model, config):
    """torch's .grad of every HF parameter under its byhand name; c_attn's gradient cut into Q, K, V by hand."""
    g = {n.removeprefix("transformer."): p.grad.detach().numpy() for n, p in model.named_parameters()}
    d = config.d_model
    out = {"E": g["wte.weight"], "P": g["wpe.weight"], "ln_f.gamma": g["ln_f.weight"], "ln_f.beta": g["ln_f.bias"]}
    for i in range(config.n_layers):
        h, b = f"h.{i}.", f"block{i}."
        W, c = g[h + "attn.c_attn.weight"], g[h + "attn.c_attn.bias"]  # (d, 3d), (3d,)
        out.update({b + "attn.W_q": W[:, :d], b + "attn.W_k": W[:, d:2 * d], b + "attn.W_v": W[:, 2 * d:],
                    b + "attn.b_q": c[:d], b + "attn.b_k": c[d:2 * d], b + "attn.b_v": c[2 * d:],
                    b + "attn.W_o": g[h + "attn.c_proj.weight"], b + "attn.b_o": g[h + "attn.c_proj.bias"],
                    b + "ln1.gamma": g[h + "ln_1.weight"], b + "ln1.beta": g[h + "ln_1.bias"],
                    b + "ln2.gamma": g[h + "ln_2.weight"], b + "ln2.beta": g[h + "ln_2.bias"],
                    b + "ffn.W_1": g[h + "mlp.c_fc.weight"], b + "ffn.b_1": g[h + "mlp.c_fc.bias"],
                    b + "ffn.W_2": g[h + "mlp.c_proj.weight"], b + "ffn.b_2": g[h + "mlp.c_proj.bias"]})
    if "lm_head.weight" in g:  # untied: nn.Linear's (V, d) weight is byhand's W_out transposed
        out["W_out"] = g["lm_head.weight"].T
    return out


def rel_err(a, b):
    return float(np.max(np.abs(a - b)) / max(np.max(np.abs(b)), 1e-300))


@pytest.mark.parametrize("overrides, attn", CASES)
def test_logits_loss_and_every_gradient(hf, torch, tmp_path, overrides, attn):
    model = random_gpt2(hf, torch, tmp_path, attn=attn, **overrides)
    params, config = gpt2.load_gpt2(tmp_path)
    assert (config.n_layers, config.d_model, config.tie_weights) == (
        overrides["n_layer"], overrides["n_embd"], overrides.get("tie_word_embeddings", True))
    rng = np.random.default_rng(1)
    for shape in BATCH_SHAPES:
        ids = rng.integers(0, config.vocab_size, size=shape)
        targets = np.concatenate([ids[:, 1:], np.full((shape[0], 1), -1)], axis=1)  # next token; last ignored
        loss, grads, trace = gpt_loss_and_grads(params, (ids, targets), config)

        model.zero_grad()
        x = torch.tensor(ids)
        out = model(input_ids=x, labels=x)  # HF shifts the labels itself
        logits = out.logits  # (B, T, V) float64
        V = config.vocab_size
        ref_loss = torch.nn.functional.cross_entropy(logits[:, :-1].reshape(-1, V), x[:, 1:].reshape(-1))
        ref_loss.backward()  # float64 autograd through the whole HF model

        assert rel_err(trace["logits"], logits.detach().numpy()) <= RTOL_LOGITS, shape
        assert abs(loss - ref_loss.item()) <= RTOL_LOSS * abs(ref_loss.item()), shape
        assert abs(loss - out.loss.item()) <= 1e-6 * abs(loss), shape  # HF's own loss is float32
        ref = hf_grads_as_byhand(model, config)
        assert set(ref) == set(gpt_param_shapes(config))
        err = {n: float(np.max(np.abs(grads[n] - ref[n]))) for n in ref}
        bad = {n: e for n, e in err.items() if e > RTOL_GRAD * np.max(np.abs(ref[n])) + ATOL_GRAD}
        assert not bad, f"{shape}: gradients differ from torch autograd: {bad}"
        for i in range(config.n_layers):  # the key bias cannot change any softmax: its gradient is 0
            assert np.max(np.abs(ref[f"block{i}.attn.b_k"])) <= ATOL_GRAD >= np.max(np.abs(grads[f"block{i}.attn.b_k"]))


def test_loading_in_float32_stays_close(hf, torch, tmp_path):
    model = random_gpt2(hf, torch, tmp_path, n_layer=2, n_embd=16, n_head=2)
    params, config = gpt2.load_gpt2(tmp_path, dtype=np.float32)
    assert {p.dtype for p in params.values()} == {np.dtype(np.float32)}
    ids = np.array([[3, 1, 4, 1, 5, 9, 2, 6]])
    logits, _ = gpt_forward(params, ids, config)
    assert logits.dtype == np.float32
    assert rel_err(logits, model(input_ids=torch.tensor(ids)).logits.detach().numpy()) <= 1e-5


def test_checkpoint_file_errors(hf, torch, tmp_path):
    from safetensors.numpy import load_file, save_file

    random_gpt2(hf, torch, tmp_path, n_layer=2, n_embd=16, n_head=2)
    tensors = load_file(str(tmp_path / "model.safetensors"))
    tensors["transformer.h.1.mlp.c_fc.weight"] = tensors["transformer.h.1.mlp.c_fc.weight"].T.copy()
    save_file(tensors, str(tmp_path / "model.safetensors"))
    with pytest.raises(ValueError, match=r"h.1.mlp.c_fc.weight must have shape \(16, 64\) for this config, got \(64, 16\)"):
        gpt2.load_gpt2(tmp_path)
    del tensors["transformer.wpe.weight"]
    save_file(tensors, str(tmp_path / "model.safetensors"))
    with pytest.raises(ValueError, match="missing tensor.*wpe.weight"):
        gpt2.load_gpt2(tmp_path)


SENTENCES = ["When Mary and John went to the store, John gave a drink to Mary",
             "When Mary and John went to the park, Mary gave a ball to John",
             "Then Mary and John had a long day. John gave the book to Mary"] * 20


def tiny_tokenizer(folder):
    """A byte-level BPE tokenizer in GPT-2's style, trained offline on a few sentences, saved as tokenizer.json."""
    from tokenizers import Tokenizer, decoders, models, pre_tokenizers, trainers

    tok = Tokenizer(models.BPE())
    tok.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    tok.decoder = decoders.ByteLevel()
    trainer = trainers.BpeTrainer(vocab_size=320, special_tokens=["<|endoftext|>"],
                                  initial_alphabet=pre_tokenizers.ByteLevel.alphabet(), show_progress=False)
    tok.train_from_iterator(SENTENCES, trainer)
    tok.save(str(folder / "tokenizer.json"))
    return tok


def test_tokenizer_and_six_ideas_against_transformers(hf, torch, tmp_path):
    tok = tiny_tokenizer(tmp_path)
    V, bos = tok.get_vocab_size(), tok.token_to_id("<|endoftext|>")
    model = random_gpt2(hf, torch, tmp_path, vocab_size=V, n_positions=24, n_layer=2, n_embd=16, n_head=4)
    cfg = (tmp_path / "config.json").read_text().replace('"bos_token_id": 0', f'"bos_token_id": {bos}')
    (tmp_path / "config.json").write_text(cfg)
    params, config = gpt2.load_gpt2(tmp_path)
    mine = gpt2.load_tokenizer(tmp_path)
    theirs = hf.PreTrainedTokenizerFast(tokenizer_file=str(tmp_path / "tokenizer.json"))
    text = SENTENCES[0]
    assert list(mine.encode(text)) == [bos] + theirs.encode(text, add_special_tokens=False)
    assert mine.decode(mine.encode(text)[1:]) == text
    assert list(gpt2.load_tokenizer(tmp_path, bos=False).encode("to Mary")) == tok.encode("to Mary").ids

    prompt = text[: -len(" Mary")]
    r = six_ideas_numbers(params, config, mine, prompt, " Mary", layer=1, head=3, lr=0.1, steps=2)
    ids = torch.tensor(mine.encode(prompt))[None]  # (1, T)
    a = r.final.answer_id
    assert r.final.answer == " Mary" and r.final.tokens[0] == "<|endoftext|>"
    out = model(input_ids=ids, output_attentions=True)
    p = torch.softmax(out.logits[0, -1], dim=-1).detach().numpy()
    assert rel_err(r.final.probs, p) <= 1e-10
    assert rel_err(r.head.share_scaled, out.attentions[1][0, 3, -1].detach().numpy()) <= 1e-10
    full = torch.cat([ids, torch.tensor([[a]])], dim=1)
    logp = torch.log_softmax(model(input_ids=full).logits[0, :-1], dim=-1)
    cost = -logp[torch.arange(full.shape[1] - 1), full[0, 1:]].sum().item()
    assert abs(r.sentence.total_cost - cost) <= 1e-10 * cost
    opt = torch.optim.SGD(model.parameters(), lr=0.1)  # the same plain SGD, done by torch
    for t in range(3):
        opt.zero_grad()
        loss = torch.nn.functional.cross_entropy(model(input_ids=ids).logits[0, -1:], torch.tensor([a]))
        assert abs(r.sgd.loss[t] - loss.item()) <= 1e-10 * max(loss.item(), 1e-3), t
        loss.backward()
        opt.step()
