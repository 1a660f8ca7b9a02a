"""byhand.gpt2 without torch, transformers or safetensors: the config and name mapping, and every error message.

The oracle for the mapping is an independent NumPy forward of GPT-2 written here in the Hugging Face layout
(fused c_attn, Conv1D's x W + b), compared with byhand.gpt on the renamed weights. The real checkpoint files
are exercised in tests/oracle/test_gpt2_parity.py, where safetensors and transformers are installed.
"""
import math
import subprocess
import sys
import types

import numpy as np
import pytest

from byhand import gpt2
from byhand.gpt import GPTConfig, gpt_forward, gpt_param_shapes
from byhand.reported import gpt2_reported

# GPT-2 small's config.json, the fields that matter (as published with the checkpoint)
SMALL = {"architectures": ["GPT2LMHeadModel"], "model_type": "gpt2", "activation_function": "gelu_new",
         "vocab_size": 50257, "n_positions": 1024, "n_ctx": 1024, "n_embd": 768, "n_head": 12, "n_layer": 12,
         "layer_norm_epsilon": 1e-05, "bos_token_id": 50256, "eos_token_id": 50256}
TINY = {"model_type": "gpt2", "vocab_size": 11, "n_positions": 8, "n_embd": 12, "n_head": 3, "n_layer": 2}


def hf_tensors(config: GPTConfig, seed: int = 0, prefix: str = "") -> dict:
    """Random arrays under every Hugging Face GPT-2 name, with the shapes written out here independently."""
    rng = np.random.default_rng(seed)
    d, f, V = config.d_model, config.d_ff, config.vocab_size
    shapes = {"wte.weight": (V, d), "wpe.weight": (config.context, d), "ln_f.weight": (d,), "ln_f.bias": (d,)}
    for i in range(config.n_layers):
        shapes.update({f"h.{i}.ln_1.weight": (d,), f"h.{i}.ln_1.bias": (d,), f"h.{i}.ln_2.weight": (d,),
                       f"h.{i}.ln_2.bias": (d,), f"h.{i}.attn.c_attn.weight": (d, 3 * d),
                       f"h.{i}.attn.c_attn.bias": (3 * d,), f"h.{i}.attn.c_proj.weight": (d, d),
                       f"h.{i}.attn.c_proj.bias": (d,), f"h.{i}.mlp.c_fc.weight": (d, f), f"h.{i}.mlp.c_fc.bias": (f,),
                       f"h.{i}.mlp.c_proj.weight": (f, d), f"h.{i}.mlp.c_proj.bias": (d,)})
    if not config.tie_weights:
        shapes["lm_head.weight"] = (V, d)
    out = {}
    for name, shape in shapes.items():
        base = 1.0 if name.endswith("ln_1.weight") or name.endswith("ln_2.weight") or name == "ln_f.weight" else 0.0
        out[prefix + name] = base + 0.4 * rng.standard_normal(shape)
    return out


def reference_forward(t: dict, config: GPTConfig, ids: np.ndarray) -> np.ndarray:
    """GPT-2's forward in the Hugging Face layout, written without byhand: ids (B, T) -> logits (B, T, V)."""
    d, h = config.d_model, config.n_heads
    dk = d // h

    def ln(x, w, b):
        mu = x.mean(-1, keepdims=True)
        var = ((x - mu) ** 2).mean(-1, keepdims=True)
        return (x - mu) / np.sqrt(var + config.ln_eps) * w + b

    def gelu(x):
        if config.gelu == "tanh":
            return 0.5 * x * (1 + np.tanh(math.sqrt(2 / math.pi) * (x + 0.044715 * x ** 3)))
        return 0.5 * x * (1 + np.vectorize(math.erf)(x / math.sqrt(2)))

    B, T = ids.shape
    x = t["wte.weight"][ids] + t["wpe.weight"][:T]
    for i in range(config.n_layers):
        a = ln(x, t[f"h.{i}.ln_1.weight"], t[f"h.{i}.ln_1.bias"])
        qkv = a @ t[f"h.{i}.attn.c_attn.weight"] + t[f"h.{i}.attn.c_attn.bias"]  # Conv1D: x W + b
        q, k, v = (qkv[..., j * d:(j + 1) * d].reshape(B, T, h, dk).transpose(0, 2, 1, 3) for j in range(3))
        s = q @ k.transpose(0, 1, 3, 2) / math.sqrt(dk)
        s = np.where(np.tril(np.ones((T, T), bool)), s, -np.inf)
        w = np.exp(s - s.max(-1, keepdims=True))
        w /= w.sum(-1, keepdims=True)
        o = (w @ v).transpose(0, 2, 1, 3).reshape(B, T, d)
        x = x + o @ t[f"h.{i}.attn.c_proj.weight"] + t[f"h.{i}.attn.c_proj.bias"]
        m = ln(x, t[f"h.{i}.ln_2.weight"], t[f"h.{i}.ln_2.bias"])
        m = gelu(m @ t[f"h.{i}.mlp.c_fc.weight"] + t[f"h.{i}.mlp.c_fc.bias"])
        x = x + m @ t[f"h.{i}.mlp.c_proj.weight"] + t[f"h.{i}.mlp.c_proj.bias"]
    x = ln(x, t["ln_f.weight"], t["ln_f.bias"])
    head = t["lm_head.weight"] if "lm_head.weight" in t else t["wte.weight"]  # nn.Linear weight (V, d)
    return x @ head.T


def test_config_of_gpt2_small():
    c = gpt2.config_from_hf(SMALL)
    assert c == GPTConfig(vocab_size=50257, context=1024, d_model=768, n_heads=12, n_layers=12, d_ff=3072,
                          tie_weights=True, ln_eps=1e-5, gelu="tanh")
    assert sum(math.prod(s) for s in gpt_param_shapes(c).values()) == 124_439_808  # GPT-2 small's count


def test_config_options_carry_over():
    c = gpt2.config_from_hf({**TINY, "n_inner": 20, "layer_norm_epsilon": 1e-3, "activation_function": "gelu",
                             "tie_word_embeddings": False, "reorder_and_upcast_attn": True})
    assert (c.d_ff, c.ln_eps, c.gelu, c.tie_weights) == (20, 1e-3, "erf", False)
    assert gpt2.config_from_hf({**TINY, "n_inner": None}).d_ff == 48


@pytest.mark.parametrize("change, message", [
    ({"model_type": "llama"}, "unsupported model_type 'llama'"),
    ({"architectures": ["GPT2ForSequenceClassification"]}, "unsupported architecture"),
    ({"activation_function": "relu"}, "unsupported activation_function 'relu'"),
    ({"scale_attn_weights": False}, "scale_attn_weights=False"),
    ({"scale_attn_by_inverse_layer_idx": True}, "scale_attn_by_inverse_layer_idx=True"),
    ({"add_cross_attention": True}, "add_cross_attention=True"),
    ({"n_embd": 10}, "does not divide d_model"),
])
def test_unsupported_configs_are_refused(change, message):
    with pytest.raises(ValueError, match=message):
        gpt2.config_from_hf({**TINY, **change})


def test_config_errors_for_missing_sizes_and_non_dicts():
    with pytest.raises(ValueError, match="lacks n_embd, n_layer"):
        gpt2.config_from_hf({k: v for k, v in TINY.items() if k not in ("n_embd", "n_layer")})
    with pytest.raises(ValueError, match="must be a dict"):
        gpt2.config_from_hf("config.json")


@pytest.mark.parametrize("tie, gelu, prefix", [(True, "gelu_new", ""), (False, "gelu", "transformer.")])
def test_renamed_weights_give_gpt2s_logits(tie, gelu, prefix):
    config = gpt2.config_from_hf({**TINY, "tie_word_embeddings": tie, "activation_function": gelu})
    t = hf_tensors(config, seed=3, prefix=prefix)
    params = gpt2.params_from_hf(t, config)
    assert list(params) == list(gpt_param_shapes(config))
    ids = np.array([[1, 5, 2, 10, 0, 7], [3, 3, 9, 4, 8, 1]])
    logits, _ = gpt_forward(params, ids, config)
    want = reference_forward({k[len(prefix):]: v for k, v in t.items()}, config, ids)
    np.testing.assert_allclose(logits, want, rtol=1e-12, atol=1e-12)


def test_split_and_orientation_by_name():
    config = gpt2.config_from_hf({**TINY, "tie_word_embeddings": False})
    t = hf_tensors(config, seed=4)
    p = gpt2.params_from_hf(t, config)
    W, b, d = t["h.1.attn.c_attn.weight"], t["h.1.attn.c_attn.bias"], 12
    np.testing.assert_array_equal(p["block1.attn.W_q"], W[:, :d])  # Conv1D weights are (d_in, d_out): no transpose
    np.testing.assert_array_equal(p["block1.attn.W_k"], W[:, d:2 * d])
    np.testing.assert_array_equal(p["block1.attn.W_v"], W[:, 2 * d:])
    np.testing.assert_array_equal(p["block1.attn.b_v"], b[2 * d:])
    np.testing.assert_array_equal(p["block0.ffn.W_2"], t["h.0.mlp.c_proj.weight"])
    np.testing.assert_array_equal(p["W_out"], t["lm_head.weight"].T)  # nn.Linear is (d_out, d_in): transposed
    assert all(a.flags.c_contiguous and a.flags.writeable for a in p.values())
    back = gpt2.params_to_hf(p, config)
    assert set(back) == set(t)
    for name in t:
        np.testing.assert_array_equal(back[name], t[name])


def test_dtype_buffers_and_tied_head():
    config = gpt2.config_from_hf(TINY)
    t = hf_tensors(config, seed=5, prefix="transformer.")
    t["transformer.h.0.attn.bias"] = np.tril(np.ones((1, 1, 8, 8)))  # old checkpoints' mask buffers: skipped
    t["transformer.h.1.attn.masked_bias"] = np.array(-1e4)
    t["lm_head.weight"] = t["transformer.wte.weight"].copy()  # a tied head saved anyway: accepted
    p = gpt2.params_from_hf(t, config, dtype=np.float32)
    assert {a.dtype for a in p.values()} == {np.dtype(np.float32)}
    t["lm_head.weight"] = t["lm_head.weight"] + 1.0
    with pytest.raises(ValueError, match="lm_head.weight differs from wte.weight"):
        gpt2.params_from_hf(t, config)


def test_mapping_errors_name_the_tensor():
    config = gpt2.config_from_hf(TINY)
    t = hf_tensors(config)
    with pytest.raises(ValueError, match="missing tensor.*h.1.mlp.c_fc.bias"):
        gpt2.params_from_hf({k: v for k, v in t.items() if k != "h.1.mlp.c_fc.bias"}, config)
    with pytest.raises(ValueError, match="unexpected tensor.*h.2.ln_1.weight"):
        gpt2.params_from_hf({**t, "h.2.ln_1.weight": np.ones(12)}, config)
    with pytest.raises(ValueError, match=r"h.0.attn.c_attn.weight must have shape \(12, 36\).*\(36, 12\)"):
        gpt2.params_from_hf({**t, "h.0.attn.c_attn.weight": t["h.0.attn.c_attn.weight"].T}, config)
    with pytest.raises(ValueError, match="lm_head.weight"):
        gpt2.params_from_hf(t, gpt2.config_from_hf({**TINY, "tie_word_embeddings": False}))
    with pytest.raises(ValueError, match="dtype must be float32 or float64"):
        gpt2.params_from_hf(t, config, dtype=np.int32)


def test_missing_files_raise_file_not_found(tmp_path):
    with pytest.raises(FileNotFoundError, match="no checkpoint folder"):
        gpt2.load_gpt2(tmp_path / "absent")
    with pytest.raises(FileNotFoundError, match="no config.json"):
        gpt2.load_gpt2(tmp_path)
    (tmp_path / "config.json").write_text('{"model_type": "bert"}')
    with pytest.raises(ValueError, match="unsupported model_type 'bert'"):
        gpt2.load_gpt2(tmp_path)
    (tmp_path / "config.json").write_text('{"model_type": "gpt2", "vocab_size": 11, "n_positions": 8, '
                                          '"n_embd": 12, "n_head": 3, "n_layer": 2}')
    with pytest.raises(FileNotFoundError, match="no model.safetensors"):
        gpt2.load_gpt2(tmp_path)
    with pytest.raises(FileNotFoundError, match="no tokenizer.json"):
        gpt2.load_tokenizer(tmp_path)


def test_missing_packages_give_an_install_hint(tmp_path, monkeypatch):
    (tmp_path / "config.json").write_text('{"model_type": "gpt2", "vocab_size": 11, "n_positions": 8, '
                                          '"n_embd": 12, "n_head": 3, "n_layer": 2}')
    (tmp_path / "model.safetensors").write_bytes(b"")
    (tmp_path / "tokenizer.json").write_text("{}")
    for mod in ("safetensors", "safetensors.numpy", "tokenizers", "huggingface_hub"):
        monkeypatch.setitem(sys.modules, mod, None)  # import of a None entry raises ImportError
    with pytest.raises(ImportError, match="needs the safetensors package"):
        gpt2.load_gpt2(tmp_path)
    with pytest.raises(ImportError, match="needs the tokenizers package"):
        gpt2.load_tokenizer(tmp_path)
    with pytest.raises(ImportError, match="needs the huggingface_hub package"):
        gpt2.download_gpt2(dest=tmp_path / "dl")


def test_where_the_weights_are_looked_for(tmp_path, monkeypatch):
    monkeypatch.setenv("BYHAND_GPT2_DIR", str(tmp_path))
    assert gpt2.default_gpt2_dir() == tmp_path
    assert not gpt2.gpt2_files_present()
    for name in ("config.json", "model.safetensors", "tokenizer.json"):
        (tmp_path / name).write_text("{}")
    assert gpt2.gpt2_files_present() and gpt2.gpt2_files_present(tmp_path)
    monkeypatch.delenv("BYHAND_GPT2_DIR")
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    assert gpt2.default_gpt2_dir() == tmp_path / "home" / ".cache" / "byhand" / "gpt2"


def test_download_asks_the_hub_for_three_files(tmp_path, monkeypatch):
    calls = []
    fake = types.ModuleType("huggingface_hub")
    fake.hf_hub_download = lambda repo_id, filename, local_dir: calls.append((repo_id, filename, local_dir))
    monkeypatch.setitem(sys.modules, "huggingface_hub", fake)  # no network: the hub is a stand-in
    folder = gpt2.download_gpt2(dest=tmp_path / "w")
    assert folder == tmp_path / "w" and folder.is_dir()
    assert calls == [("gpt2", f, str(folder)) for f in ("config.json", "model.safetensors", "tokenizer.json")]


def test_import_needs_none_of_the_optional_packages():
    code = ("import sys, byhand.gpt2, byhand.six_ideas; "
            "print(sorted(m for m in ('safetensors', 'tokenizers', 'huggingface_hub', 'torch') if m in sys.modules))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.strip() == "[]"


@pytest.mark.parametrize("printed, unit", [("0.30", 0.01), ("2.8e-24", 1e-25), ("14", 1.0), ("0.99997", 1e-5),
                                           ("-74.8", 0.1), ("2e-5", 1e-5)])
def test_tolerance_is_half_the_last_printed_unit_and_a_little(printed, unit):
    assert gpt2.printed_tolerance(printed) == pytest.approx((0.5 + gpt2.SLACK) * unit, rel=1e-12)
    assert 0 < gpt2.SLACK < 0.5  # round-off room, never a whole printed digit


@pytest.mark.parametrize("bad, message", [(0.3, "must be the figure as a string"), ("about 93", "not a decimal"),
                                          ("nan", "not finite"), ("inf", "not finite")])
def test_tolerance_refuses_what_is_no_printed_number(bad, message):
    with pytest.raises(ValueError, match=message):
        gpt2.printed_tolerance(bad)


def test_reported_figures_keep_their_printed_digits():
    printed = gpt2.reported_as_printed()
    assert list(printed) == list(gpt2_reported())
    assert all(float(printed[k]) == v for k, v in gpt2_reported().items())  # the same numbers
    assert printed["loss after 1 step"] == "0.30"  # the trailing zero that a float would lose


def test_a_figure_agrees_within_its_printed_rounding():
    def fig(computed, printed="0.677", setting=False):
        return gpt2.Figure("P(answer)", printed, computed, gpt2.printed_tolerance(printed), setting)

    assert fig(0.6774).agrees and fig(0.6766).agrees  # both round to 0.677
    assert not fig(0.6756).agrees and not fig(0.6786).agrees  # 0.676 and 0.679 do not
    assert fig(123.0, setting=True).agrees  # a setting of the run is shown, never compared
    assert not fig(15, printed="14").agrees and fig(14, printed="14").agrees  # counts must match


def test_sentence_countings_need_a_start_token():
    config = gpt2.config_from_hf(TINY)
    params = gpt2.params_from_hf(hf_tensors(config), config)
    with pytest.raises(ValueError, match="no start token"):
        gpt2.sentence_countings(params, config, gpt2.HFTokenizer(tokenizer=None, bos_id=None), "to Mary")
    with pytest.raises(ValueError, match="tokenizer"):
        gpt2.sentence_countings(params, config, object(), "to Mary")
