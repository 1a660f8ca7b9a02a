"""Waits on conditions, not on the clock, for the browser checks (check_html, check_keyboard, check_a11y).

``until(page, js, arg)`` waits until the JavaScript predicate ``js`` (a function of ``arg``) is true in the page and
says whether it became true within ``timeout`` ms: the caller reports what did not happen, so a timeout is a finding,
not an exception. ``settled(page)`` waits for the page to paint twice: what a script queued for the next frame
(measuring boxes, typesetting a line, resizing after the window did) has run by then.
"""
from __future__ import annotations

TWO_FRAMES = "() => new Promise(r => requestAnimationFrame(() => requestAnimationFrame(() => r(true))))"


def until(page, js: str, arg=None, timeout: int = 3000) -> bool:
    try:
        page.wait_for_function(js, arg=arg, timeout=timeout)
        return True
    except Exception:  # noqa: BLE001 - playwright's TimeoutError; the caller reports what did not happen
        return False


def settled(page) -> None:
    page.evaluate(TWO_FRAMES)
