"""Tests for byhand.views.backward_map (chapter 35's map of the backward pass)."""
import matplotlib

matplotlib.use("Agg")
import numpy as np
import pytest

from byhand import toy_2017 as toy
from byhand.views.backward_map import (WALK, backward_map, backward_map_describe, backward_map_figure,
                                       backward_map_table)


@pytest.fixture(scope="module")
def boxes():
    return backward_map(toy.exact_path().trace)


def test_every_box_once_in_walking_order_with_its_gradients_norm(boxes):
    tr = toy.exact_path().trace
    assert [m.name for m in boxes] == list(WALK) and [m.order for m in boxes] == list(range(1, len(WALK) + 1))
    for m in boxes[1:]:
        assert tr[m.grad].shape == tr[m.name].shape  # the gradient has the shape of what it is the gradient of
        assert m.norm == pytest.approx(np.sqrt(np.sum(tr[m.grad] ** 2)), rel=1e-14)
    assert boxes[0].grad == "" and np.isnan(boxes[0].norm)  # the loss box: where the walk starts
    assert boxes[1].grad == "dlogits"


def test_the_memory_gradient_is_the_sum_over_the_cross_attentions_keys_and_values(boxes):
    tr, params = toy.exact_path().trace, toy.toy_params()
    mem = next(m for m in boxes if m.name == "enc0.ln2")
    dK, dV = tr["ddec0.cross.K"], tr["ddec0.cross.V"]  # (h, T_s, d_k) each
    merged = lambda a: np.concatenate(list(a), axis=-1)  # noqa: E731  (h, T, d_k) -> (T, h d_k)
    by_hand = merged(dK) @ params["dec0.cross.W_k"].T + merged(dV) @ params["dec0.cross.W_v"].T
    assert mem.norm == pytest.approx(np.linalg.norm(by_hand), rel=1e-12)


def test_text_alternative_and_table_come_from_the_boxes(boxes):
    alt = backward_map_describe(boxes)
    assert all(f"{m.norm:.4f}" in alt for m in boxes[1:]) and all(m.label in alt for m in boxes)
    cols, rows = backward_map_table(boxes)
    assert len(rows) == len(boxes) and cols[0] == "walk"


def test_table_prints_the_same_digits_as_the_figure_and_its_text(boxes):
    from byhand.figure import cell
    alt = backward_map_describe(boxes)
    _, rows = backward_map_table(boxes)
    for m, row in zip(boxes[1:], rows[1:]):  # no second rounding: 0.227445 must not become 0.22745, then 0.2275
        assert cell(row[-1]) == f"{m.norm:.4f}" and f"= {cell(row[-1])}" in alt


def test_figure_draws_and_a_forward_only_trace_is_refused(boxes):
    import matplotlib.pyplot as plt
    fig = backward_map_figure(boxes)
    assert len(fig.axes) == 1
    plt.close(fig)
    fwd = {k: v for k, v in toy.exact_path().trace.items() if not k.startswith(("dd", "den", "dX", "dlog"))}
    with pytest.raises(ValueError, match="no gradient"):
        backward_map(fwd)


def test_route_frame_at_zero_is_the_map_and_the_shortcut_is_caught_by_finite_differences(boxes):
    import byhand.encdec as encdec
    from byhand.layernorm import layernorm_backward
    from byhand.views.backward_map import SOURCE_LNS, route_frame, route_frame_describe, route_frame_label

    frames = [route_frame(k) for k in range(len(SOURCE_LNS) + 1)]
    full, all_four = frames[0], frames[-1]
    assert [m.norm for m in full.boxes[1:]] == pytest.approx([m.norm for m in boxes[1:]], rel=1e-12)
    assert full.fd_gap < 1e-8 and all_four.fd_gap > 1e-2  # the full Jacobian passes, the shortcut does not
    assert encdec.layernorm_backward is layernorm_backward  # the shortcut is undone after the frame
    assert full.loss == pytest.approx(toy.exact_path().loss, rel=1e-14) and full.dlogit_am < 0
    assert all(f.loss == full.loss for f in frames)  # the shortcut changes the backward pass only
    assert route_frame(0, delta=6.0).dlogit_am > 0  # far enough up, p_am passes the smoothed target
    assert "I/σ" in route_frame_label(all_four) and "below 1e-8" in route_frame_describe(full)
    with pytest.raises(ValueError, match="k must be"):
        route_frame(5)


def test_route_frame_takes_the_shortcut_only_in_the_chosen_layer_norms():
    """Independent oracle: walk the scored row by hand with numpy, each layer norm's gradient as dy/σ (shortcut) or
    dy J_LN (full), through the decoder's last two Add & Norms; the frame's boxes must match at each k."""
    from byhand.layernorm import layernorm_jacobian
    from byhand.views.backward_map import route_frame

    tr, params, s = toy.exact_path().trace, toy.toy_params(), toy.SCORED
    dh = toy.exact_path().dlogits @ params["W_out"].T  # (4,) the gradient at H_1
    for k in (0, 1, 2):
        def back(dy, name):  # (4,) through one layer norm at the scored row
            x = tr[name.replace("ln", "res")][s]
            return dy / x.std() if name in ("dec0.ln3", "dec0.ln2")[:k] else dy @ layernorm_jacobian(x, np.ones(4), eps=0.0)
        dres3 = back(dh, "dec0.ln3")
        box = {m.name: m.norm for m in route_frame(k).boxes}
        assert box["dec0.ffn.out"] == pytest.approx(np.linalg.norm(dres3), rel=1e-12)
        dln2 = 2 * dres3  # FFN(x) = x in this decoder, plus the skip path
        assert box["dec0.ln2"] == pytest.approx(np.linalg.norm(dln2), rel=1e-12)
        assert box["dec0.cross.out"] == pytest.approx(np.linalg.norm(back(dln2, "dec0.ln2")), rel=1e-12)


def test_route_frame_draws():
    import matplotlib.pyplot as plt
    from byhand.views.backward_map import draw_route_frame, route_frame

    fig = plt.figure(figsize=(7.2, 5.0))
    draw_route_frame(fig, route_frame(2))
    assert len(fig.axes) == 1 and "gap" in fig.axes[0].get_title()
    assert sum("(I/σ)" in t.get_text() for t in fig.axes[0].texts) == 2  # the two shortcut layer norms are marked
    plt.close(fig)
