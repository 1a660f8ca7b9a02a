"""Tests for byhand.views.machine (the toy's block diagram) and toy_2017.weight_sheet (every weight once)."""
import matplotlib

matplotlib.use("Agg")
import numpy as np
import pytest

from byhand import toy_2017 as toy
from byhand.views.machine import KINDS, machine_boxes, machine_describe, machine_figure, machine_table


@pytest.fixture(scope="module")
def boxes():
    return machine_boxes(toy.exact_path().trace)


def test_boxes_read_their_shapes_from_the_trace(boxes):
    tr = toy.exact_path().trace
    assert all(b.shape == tr[b.name].shape for b in boxes)
    assert {b.kind for b in boxes} <= set(KINDS)
    assert [b.step for b in boxes if b.side == "encoder"] == list(range(6))


def test_text_alternative_and_table_come_from_the_boxes(boxes):
    alt = machine_describe(boxes)
    assert all(b.label in alt for b in boxes) and "memory (2 × 4)" in alt
    cols, rows = machine_table(boxes)
    assert len(rows) == len(boxes) and cols[-1] == "shape"


def test_figure_draws_and_a_wrong_trace_is_refused(boxes):
    import matplotlib.pyplot as plt
    fig = machine_figure(boxes)
    assert len(fig.axes) == 1
    plt.close(fig)
    with pytest.raises(ValueError, match="no entries"):
        machine_boxes({"X_src": np.zeros((2, 4))})


def test_weight_sheet_names_every_parameter_once_with_its_value():
    params = toy.toy_params()
    sheet = toy.weight_sheet()
    named = [n for e in sheet for n in e.names]
    assert sorted(named) == sorted(params) and len(named) == len(set(named))
    assert all(np.array_equal(params[n], e.value) for e in sheet for n in e.names)
    assert {e.source for e in sheet} == {"post", "book", "post and book"}
    assert [e.digits for e in sheet if e.names[0].startswith("E_")] == [2, 2]


def test_given_the_trace_every_box_prints_its_own_rows_and_the_layout_holds(boxes):
    import matplotlib.pyplot as plt
    from layout_check import check_layout
    from byhand.views.machine import SHOWN, box_rows

    tr = toy.exact_path().trace
    by_name = {b.name: b for b in boxes}
    assert box_rows(by_name["X_src"], tr) == ["[    1     0     1     0]", "[    0     1     0     1]"]
    assert box_rows(by_name["enc0.attn.out"], tr)[0] == "[ 0.67  0.33  0.67  0.33]"
    relu = box_rows(by_name["enc0.ffn.pre"], tr)  # the ReLU box shows its 8 columns after the ReLU, elided at 4
    assert relu[0] == "[    1     0     1     0     …]" and SHOWN["enc0.ffn.pre"] == "enc0.ffn.relu"
    alt = machine_describe(boxes, tr)
    assert "[0.04 0.17 0.65 0.14]" in alt and "[-2.67 -0.89 2.67 0.89]" in alt
    assert "[" not in machine_describe(boxes)  # without values: the shapes only, as before
    cols, rows = machine_table(boxes, tr)
    assert cols[-1].startswith("array") and len(rows) == len(boxes) and "0.6698" in rows[1][-1]
    fig = machine_figure(boxes, tr)
    check_layout(fig, "machine with rows")
    plt.close(fig)
