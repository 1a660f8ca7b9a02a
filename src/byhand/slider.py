"""Static sliders: a widget's view precomputed over a list of settings, scrubbable with no kernel.

A widget needs a running kernel; the published page has none. So each widget in the book gets a twin:
the same ``draw(fig, setting)`` function rendered once per setting into compact PNG frames, wrapped in a small
HTML player of the book's own (a range input, previous/next/play buttons and a few lines of JavaScript, no
network). The widget and the slider call the same ``draw``, so they cannot disagree. Frame 0 is the default
setting. Introduced in Part I, "Dot products".

Legibility. A frame is shown at its true size (``DISPLAY_DPI`` = 96 CSS pixels per figure inch, so a 9 pt label
reads as 9 pt) and rendered at ``SCALE`` times that for high-density screens. Each frame's label (``label(s)``) is
a line of text above the image that changes with the frame; each frame's text alternative (``describe(s)``, the
label where none is given) is the image's ``alt`` and the range input's ``aria-valuetext``.

Determinism. The player's element ids are a hash of its frames and labels, so re-executing a chapter gives the
same bytes. A print strip (first, middle and last frame with their labels) is filled in by the script and hidden
on screen; print style sheets may show it.
"""
from __future__ import annotations

import base64
import hashlib
import html as html_lib
import io
import json
from dataclasses import dataclass
from typing import Callable, Sequence

# No matplotlib.use() here: switching backends at import would turn off Jupyter's inline figures for every cell
# after it. Headless, matplotlib falls back to Agg by itself.
import matplotlib.pyplot as plt
from PIL import Image  # a matplotlib dependency

DISPLAY_DPI = 96  # CSS pixels per figure inch on the page: a figure inch is a CSS inch, a point is a point
SCALE = 2  # frames carry SCALE × the pixels they are shown at (sharp on high-density screens)
MAX_FRAMES = 40  # more would make a heavy page


def compact_png(png: bytes, colors: int = 96) -> bytes:
    """Re-encode a PNG with an adaptive palette of ``colors`` colours: figures have few colours, so this is
    several times smaller and looks the same. No metadata is written (no software version, no date)."""
    with Image.open(io.BytesIO(png)) as im:
        pal = im.convert("RGB").quantize(colors=colors, method=Image.Quantize.MEDIANCUT, dither=Image.Dither.NONE)
        out = io.BytesIO()
        pal.save(out, format="PNG", optimize=True)
    return out.getvalue()


def render_png(draw: Callable, setting, figsize: tuple[float, float], dpi: int = DISPLAY_DPI * SCALE,
               colors: int = 96) -> bytes:
    """Render ``draw(fig, setting)`` into a fresh figure and return compact PNG bytes at ``dpi``."""
    fig = plt.figure(figsize=figsize, dpi=DISPLAY_DPI)
    try:
        draw(fig, setting)
        buf = io.BytesIO()
        fig.savefig(buf, format="png", dpi=dpi, metadata={"Software": None})
    finally:
        plt.close(fig)
    return compact_png(buf.getvalue(), colors)


@dataclass(frozen=True)
class StaticSlider:
    """Rendered frames plus the HTML player. ``frames[k]`` is the PNG for ``settings[k]``, captioned ``labels[k]``
    and described by ``alts[k]``."""

    settings: tuple
    labels: tuple[str, ...]
    alts: tuple[str, ...]
    frames: tuple[bytes, ...]
    html: str

    def _repr_html_(self) -> str:
        return self.html

    def __repr__(self) -> str:
        return f"StaticSlider({len(self.frames)} frames: {self.labels[0]} … {self.labels[-1]})"

    @property
    def nbytes(self) -> int:
        """Size of the HTML that the page carries."""
        return len(self.html.encode())


# The player's script: one per slider, so that it runs wherever the HTML is shown (the static page, JupyterLab,
# Colab). %(uid)s is the content hash; the frames, labels and text alternatives follow as JSON.
_SCRIPT = """<script>
(function () {
  var root = document.getElementById("bhs-%(uid)s");
  if (!root || root.dataset.ready) return;
  root.dataset.ready = "1";
  var data = JSON.parse(root.querySelector("script.byhand-slider-data").textContent);
  var img = root.querySelector(".byhand-slider-img"), caption = root.querySelector(".byhand-frame-label");
  var range = root.querySelector("input[type=range]"), play = root.querySelector(".byhand-slider-play");
  data.frames[0] = img.getAttribute("src");  // frame 0 is carried once, by the image itself
  var n = data.frames.length, timer = null;
  function show(k) {
    k = Math.max(0, Math.min(n - 1, k));
    range.value = k;
    img.src = data.frames[k];
    img.alt = data.alts[k];
    caption.textContent = data.labels[k];
    range.setAttribute("aria-valuetext", said(k));
  }
  function said(k) { return data.alts[k] === data.labels[k] ? data.labels[k] : data.labels[k] + ": " + data.alts[k]; }
  function stop() { if (timer) { clearInterval(timer); timer = null; play.textContent = "Play"; } }
  range.addEventListener("input", function () { stop(); show(+range.value); });
  root.querySelector(".byhand-slider-prev").addEventListener("click", function () { stop(); show(+range.value - 1); });
  root.querySelector(".byhand-slider-next").addEventListener("click", function () { stop(); show(+range.value + 1); });
  play.addEventListener("click", function () {
    if (timer) { stop(); return; }
    if (+range.value >= n - 1) show(0);
    play.textContent = "Pause";
    timer = setInterval(function () { if (+range.value >= n - 1) stop(); else show(+range.value + 1); }, 400);
  });
  var strip = root.querySelector(".byhand-slider-strip");
  [0, Math.floor((n - 1) / 2), n - 1].forEach(function (k) {
    var fig = document.createElement("figure"), im = document.createElement("img"), cap = document.createElement("figcaption");
    fig.className = "byhand-strip-frame";
    im.src = data.frames[k]; im.alt = data.alts[k]; im.width = img.width; im.height = img.height;
    cap.textContent = said(k);
    fig.appendChild(im); fig.appendChild(cap); strip.appendChild(fig);
  });
})();
</script>"""

_BUTTON = 'type="button" aria-controls="bhs-{uid}-img" style="min-width: 2.75em; min-height: 2.25em;"'


def player_html(frames: Sequence[bytes], labels: Sequence[str], alts: Sequence[str], width: int, height: int,
                name: str = "Frame") -> str:
    """The player for PNG ``frames`` shown at ``width`` × ``height`` CSS pixels (shrinking to the column).

    Above the image, a line names the frame on show (``labels``, announced politely to screen readers); the
    image's ``alt`` and the range input's ``aria-valuetext`` carry ``alts``. ``name`` is the range input's label.
    """
    if not (len(frames) == len(labels) == len(alts)) or len(frames) < 2:
        raise ValueError(f"a player needs ≥ 2 frames with one label and one description each, got "
                         f"{len(frames)} frames, {len(labels)} labels, {len(alts)} descriptions")
    uris = ["data:image/png;base64," + base64.b64encode(f).decode() for f in frames]
    # frame 0 is the image's own src (shown even where scripts do not run); the JSON carries the others
    data = json.dumps({"frames": [""] + uris[1:], "labels": list(labels), "alts": list(alts)}, ensure_ascii=False)
    data = data.replace("</", "<\\/")  # the JSON sits inside a <script> element
    uid = hashlib.sha1(data.encode()).hexdigest()[:12]  # the same frames give the same ids, run after run
    esc = html_lib.escape
    button = _BUTTON.format(uid=uid)
    return f"""<div class="byhand-slider" id="bhs-{uid}" style="max-width: 100%; overflow-x: auto;">
<p class="byhand-frame-label" id="bhs-{uid}-label" aria-live="polite" style="font-weight: 600; margin: 0.25em 0;">{esc(labels[0])}</p>
<img class="byhand-slider-img" id="bhs-{uid}-img" src="{uris[0]}" width="{width}" height="{height}" alt="{esc(alts[0])}" style="display: block; max-width: 100%; height: auto;">
<div class="byhand-slider-controls" style="display: flex; flex-wrap: wrap; align-items: center; gap: 0.25em; margin: 0.25em 0;">
<button class="byhand-slider-prev" {button} aria-label="Previous frame">&#8249;</button>
<input type="range" id="bhs-{uid}-range" min="0" max="{len(frames) - 1}" step="1" value="0" aria-label="{esc(name)}" aria-valuetext="{esc(labels[0] if alts[0] == labels[0] else labels[0] + ': ' + alts[0])}" aria-controls="bhs-{uid}-img" style="width: min(374px, 100%);">
<button class="byhand-slider-next" {button} aria-label="Next frame">&#8250;</button>
<button class="byhand-slider-play" {button}>Play</button>
</div>
<div class="byhand-slider-strip" aria-hidden="true" style="display: none;"></div>
<script type="application/json" class="byhand-slider-data">{data}</script>
{_SCRIPT % {"uid": uid}}
</div>"""


def static_slider(draw: Callable, settings: Sequence, label: Callable[[object], str],
                  figsize: tuple[float, float] = (7.0, 3.0), dpi: int = DISPLAY_DPI, scale: int = SCALE,
                  colors: int = 96, describe: Callable[[object], str] | None = None,
                  name: str = "Frame") -> StaticSlider:
    """Precompute ``draw(fig, s)`` for every setting ``s`` and return a scrubbable HTML player.

    ``settings[0]`` must be the widget's default, so that the static page first shows what the widget shows.
    ``label(s)`` says what frame ``s`` shows (e.g. ``"θ = 30°"``); it is the line of text above the image.
    ``describe(s)`` is the frame's text alternative, with its numbers; if omitted, the view's own
    ``draw.describe`` (``byhand.views.make_view``), else the label. Frames are shown at ``dpi`` CSS pixels per inch
    and rendered at ``scale × dpi``.
    """
    settings = tuple(settings)
    if len(settings) < 2:
        raise ValueError(f"a static slider needs at least 2 settings, got {len(settings)}")
    if len(settings) > MAX_FRAMES:
        raise ValueError(f"{len(settings)} settings would make a heavy page; use at most {MAX_FRAMES}")
    labels = tuple(str(label(s)) for s in settings)
    describe = describe if describe is not None else getattr(draw, "describe", None)
    frames = tuple(render_png(draw, s, figsize, dpi * scale, colors) for s in settings)
    alts = tuple(str(describe(s)) for s in settings) if describe is not None else labels
    html = player_html(frames, labels, alts, round(figsize[0] * dpi), round(figsize[1] * dpi), name)
    return StaticSlider(settings, labels, alts, frames, html)
