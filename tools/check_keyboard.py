"""Keyboard-only walk of a few built pages, called by tools/check_html.py (category ``keys``).

On each page of SAMPLE, with the keyboard alone (Tab, typing, Enter, the arrow keys), the way a reader without a mouse
would go:

- an answer box (byhand.exercises.answer_box): Tab reaches its input; the typed right answer and Enter put "Right."
  into its live region (role="status", aria-live="polite"); "inf" and Enter put the message for a number that is not
  finite there;
- a static slider (byhand.slider): Tab reaches its range input; ArrowRight changes the frame, its text alternative
  (the image's alt) and the caption line; ArrowLeft brings back the first frame;
- a "Show all …" box (byhand.display.matrix_tex): Tab reaches its summary, Enter opens it;
- a box that scrolls sideways (_theme/exercises.js): Tab reaches it, as a named region; ArrowRight scrolls it;
- at 390 px, a figure drawn at under half its size: Tab reaches its "Show this figure full size" button, Enter
  shows it full size.

Every control reached must show a focus ring: a computed outline of at least 2 px, or a box-shadow.
"Tab reaches X" is tested by focusing the control just before X in the page's tab order and pressing Tab once.
"""
from __future__ import annotations

from browser import until  # conditions, not sleeps (tools/browser.py)

# pages walked (file name prefixes): 01, 15 and 22 have answer boxes and a static slider, 15 and 22 "Show all …" boxes;
# 50 is the instructors' exercise index; every one has figures or boxes that scroll at 390 px
SAMPLE = ("01_", "15_", "22_", "50_")

# The page's tab order in document order (no positive tabindex in the book), and the one just before `target`.
FOCUS_BEFORE_JS = """(target) => {
  const sel = 'a[href], button, input, select, textarea, summary, [tabindex]';
  const all = [...document.querySelectorAll(sel)].filter(el => !el.disabled && el.tabIndex >= 0
      && el.checkVisibility({checkVisibilityCSS: true, contentVisibilityAuto: true}) && !el.closest('[inert]'));
  const i = all.indexOf(target);
  if (i < 0) return 'not in the tab order (disabled, hidden or tabindex -1)';
  if (document.activeElement) document.activeElement.blur();
  for (let k = i - 1; k >= 0; k--) {  // the nearest one before it that takes the focus
    all[k].focus({preventScroll: true});
    if (document.activeElement === all[k]) break;
  }
  return '';
}"""

RING_JS = """(el) => {
  const cs = getComputedStyle(el);
  const outline = cs.outlineStyle !== 'none' && parseFloat(cs.outlineWidth) >= 2;
  return outline || (cs.boxShadow && cs.boxShadow !== 'none');
}"""


def tab_to(page, element, what: str) -> list[str]:
    """Focus the control before ``element`` and press Tab: ``element`` must get the focus and show a ring."""
    element.scroll_into_view_if_needed()
    why = page.evaluate(FOCUS_BEFORE_JS, element)
    if why:
        return [f"{what}: {why}"]
    page.keyboard.press("Tab")
    if not element.evaluate("el => el === document.activeElement"):
        got = page.evaluate("() => { const a = document.activeElement;"
                            " return a ? a.tagName.toLowerCase() + '.' + a.className : 'nothing'; }")
        return [f"{what}: Tab did not reach it (the focus went to {got})"]
    if not element.evaluate(RING_JS):
        return [f"{what}: no visible focus ring (computed outline under 2 px and no box-shadow)"]
    return []


def _answer_box(page) -> list[str]:
    box = page.query_selector(".en-exercise[data-ready='1']")
    if box is None:
        return []
    data = page.evaluate("b => JSON.parse(b.getAttribute('data-exercise'))", box)
    entry, live = box.query_selector("input"), box.query_selector(".en-feedback")
    found = tab_to(page, entry, f"answer box {data['key']}")
    if found:
        return found
    if live.get_attribute("aria-live") != "polite" and live.get_attribute("role") != "status":
        found.append(f"answer box {data['key']}: its verdict is not in a live region")
    for text, want in ((repr(data["answer"]), "Right."), ("inf", "That is not a finite number")):
        page.keyboard.press("Control+A")
        page.keyboard.type(text)
        page.keyboard.press("Enter")
        # a repeated verdict is emptied and set again after 50 ms: wait for the one this answer should get
        until(page, "([el, w]) => el.innerText.startsWith(w)", [live, want], timeout=2000)
        said = live.inner_text()
        if not said.startswith(want):
            found.append(f"answer box {data['key']}: typing {text!r} and Enter put {said!r} in the live region, "
                         f"expected {want!r}…")
    page.keyboard.press("Control+A")
    page.keyboard.press("Backspace")
    return found


def _slider(page) -> list[str]:
    player = page.query_selector(".byhand-slider")
    if player is None:
        return []
    rng, img = player.query_selector("input[type=range]"), player.query_selector("img.byhand-slider-img")
    caption = player.query_selector(".byhand-frame-label")
    found = tab_to(page, rng, "static slider")
    if found:
        return found
    rng.evaluate("el => { el.value = 0; el.dispatchEvent(new Event('input')); }")

    def state():
        return img.get_attribute("src"), img.get_attribute("alt"), caption.inner_text()

    first = state()
    page.keyboard.press("ArrowRight")
    until(page, "([im, src]) => im.getAttribute('src') !== src", [img, first[0]], timeout=2000)
    second = state()
    for k, part in enumerate(("frame", "text alternative (alt)", "caption line")):
        if second[k] == first[k]:
            found.append(f"static slider: ArrowRight did not change its {part}")
    page.keyboard.press("ArrowLeft")
    until(page, "([im, src]) => im.getAttribute('src') === src", [img, first[0]], timeout=2000)
    if state() != first:
        found.append("static slider: ArrowLeft did not bring back the first frame")
    return found


def _show_all(page) -> list[str]:
    summary = page.query_selector("details.byhand-full:not([open]) > summary")
    if summary is None:
        return []
    found = tab_to(page, summary, "a “Show all …” box")
    if not found:
        page.keyboard.press("Enter")
        if not until(page, "s => s.parentElement.open", summary, timeout=2000):
            found.append("a “Show all …” box: Enter on its summary did not open it")
        summary.evaluate("s => { s.parentElement.open = false; }")
    return found


def _scroll_box(page) -> list[str]:
    # the first one on show (a collapsed code cell hides its own)
    box = page.evaluate_handle("() => [...document.querySelectorAll('.bd-article [data-byhand-region]')]"
                               ".find(el => el.checkVisibility({contentVisibilityAuto: true})) || null").as_element()
    if box is None:
        return []
    found = tab_to(page, box, "a box that scrolls sideways")
    if found:
        return found
    if not (box.get_attribute("role") and box.get_attribute("aria-label")):
        found.append("a box that scrolls sideways has no role or no name")
    box.evaluate("el => { el.scrollLeft = 0; }")
    for _ in range(3):
        page.keyboard.press("ArrowRight")
    if not until(page, "el => el.scrollLeft > 0", box, timeout=2000):  # smooth scrolling takes a few frames
        found.append("a box that scrolls sideways: ArrowRight did not scroll it")
    box.evaluate("el => { el.scrollLeft = 0; }")
    return found


def _figure_zoom(page) -> list[str]:
    button = page.query_selector(".byhand-figure-zoom:not([hidden])")
    if button is None:
        return ["at 390 px no figure offers “Show this figure full size”"]
    found = tab_to(page, button, "the “Show this figure full size” button")
    if not found:
        page.keyboard.press("Enter")
        until(page, "b => { const w = document.getElementById(b.getAttribute('aria-controls'));"
                    " const i = w.querySelector('img'); return w.classList.contains('byhand-zoomed')"
                    " && i.clientWidth >= i.naturalWidth; }", button, timeout=2000)
        wide = button.evaluate("b => { const w = document.getElementById(b.getAttribute('aria-controls')),"
                               " i = w.querySelector('img');"
                               " return [w.classList.contains('byhand-zoomed'), i.clientWidth, i.naturalWidth]; }")
        if not wide[0] or wide[1] < wide[2]:
            found.append(f"Enter on “Show this figure full size” did not show it full size ({wide})")
        page.keyboard.press("Enter")  # back to the fitted figure
    return found


def check_page(page, rel: str, width: int) -> list[tuple[str, str]]:
    """The keyboard walk on this page at this window width (nothing unless the page is in SAMPLE)."""
    if not rel.split("/")[-1].startswith(SAMPLE):
        return []
    if width >= 1000:
        found = _answer_box(page) + _slider(page) + _show_all(page) + _scroll_box(page)
    else:
        found = _scroll_box(page) + (_figure_zoom(page) if page.query_selector(".bd-article .cell_output img") else [])
    page.evaluate("() => document.activeElement && document.activeElement.blur()")
    return [("keys", f"{text} (at {width} px)") for text in found]
