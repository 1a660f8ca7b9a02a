// Every glued number says where it came from (_ext/provenance.py writes the markup).
// A number (a.prov-num) shows its popover (the span.prov-tip right after it, tied by aria-describedby) on hover
// and on keyboard focus; Escape closes it; focus never moves into it. Following the number's link, or the
// popover's, or a link of the "Numbers in this chapter" list, opens whatever <details> hides the cell, scrolls
// to it, moves focus there and highlights it briefly. No kernel and no network needed.
(function () {
  "use strict";
  let open = null;  // {anchor, tip} shown now
  let timer = 0;

  function tipOf(a) { return document.getElementById(a.getAttribute("aria-describedby")); }

  function place(a, tip) {
    const r = a.getBoundingClientRect();
    const vw = document.documentElement.clientWidth, vh = window.innerHeight, gap = 6;
    // the CSS cap (100vw) counts a visible scrollbar; the room the popover really has is the client width
    tip.style.maxWidth = Math.min(480, vw - 2 * gap) + "px";
    const w = tip.offsetWidth, h = tip.offsetHeight;
    let top = r.bottom + gap;
    if (top + h > vh - gap && r.top - gap - h >= gap) top = r.top - gap - h;  // no room below: above
    const left = Math.max(gap, Math.min(r.left, vw - w - gap));
    tip.style.left = left + "px";
    tip.style.top = Math.max(gap, top) + "px";
  }

  function show(a) {
    clearTimeout(timer);
    const tip = tipOf(a);
    if (!tip) return;
    if (open && open.tip !== tip) hide();
    tip.hidden = false;
    tip.classList.add("prov-open");
    open = {anchor: a, tip: tip};
    place(a, tip);
  }

  function hide() {
    clearTimeout(timer);
    if (!open) return;
    open.tip.hidden = true;
    open.tip.classList.remove("prov-open");
    open = null;
  }

  function later() { clearTimeout(timer); timer = setTimeout(hide, 200); }  // time to move onto the popover

  // Mark the line of the cell's code where the glue call starts (the first line holding the expression's first line).
  function markLine(target, expr) {
    target.querySelectorAll(".prov-line").forEach(function (m) { m.remove(); });
    const first = (expr || "").split("\n")[0].trim();
    const pre = first && target.querySelector("pre");
    if (!pre) return null;
    const index = pre.textContent.split("\n").findIndex(function (l) { return l.includes(first); });
    if (index < 0) return null;
    const style = getComputedStyle(pre);
    const lh = parseFloat(style.lineHeight) || 1.4 * parseFloat(style.fontSize);
    const box = pre.parentElement;
    if (getComputedStyle(box).position === "static") box.style.position = "relative";
    const mark = document.createElement("span");
    mark.className = "prov-line";
    mark.setAttribute("aria-hidden", "true");
    mark.style.top = (pre.offsetTop + parseFloat(style.paddingTop) + index * lh) + "px";
    mark.style.height = lh + "px";
    box.appendChild(mark);
    setTimeout(function () { mark.remove(); }, 2500);
    return mark;
  }

  function exprOf(link) {
    const holder = link.classList.contains("prov-num") ? tipOf(link) : link.closest(".prov-tip, tr");
    const code = holder && holder.querySelector(".prov-expr");
    return code ? code.textContent : "";
  }

  function go(id, focus, expr) {
    const target = document.getElementById(id);
    if (!target) return false;
    for (let d = target.closest("details"); d; d = d.parentElement && d.parentElement.closest("details")) d.open = true;
    target.querySelectorAll("details").forEach(function (d) { d.open = true; });  // a hide-cell's own toggle
    hide();
    const mark = markLine(target, expr);
    (mark || target).scrollIntoView({block: "center"});
    if (focus) {
      if (!target.hasAttribute("tabindex")) target.setAttribute("tabindex", "-1");
      target.focus({preventScroll: true});
    }
    target.classList.remove("prov-flash");
    void target.offsetWidth;  // restart the highlight if it is still running
    target.classList.add("prov-flash");
    // one timer per cell: an earlier link's timer must not end this highlight early
    clearTimeout(target._provFlash);
    target._provFlash = setTimeout(function () { target.classList.remove("prov-flash"); }, 2000);
    return true;
  }

  function follow(ev) {
    const link = ev.target.closest("a.prov-num, a.prov-go, a.prov-cell-link");
    if (!link) return;
    const id = (link.getAttribute("href") || "").replace(/^#/, "");
    if (go(id, true, exprOf(link))) {
      ev.preventDefault();
      history.pushState(null, "", "#" + id);
    }
  }

  function init() {
    document.querySelectorAll("a.prov-num").forEach(function (a) {
      a.addEventListener("mouseenter", function () { show(a); });
      a.addEventListener("mouseleave", later);
      a.addEventListener("focus", function () { show(a); });
      a.addEventListener("blur", function () { if (open && open.anchor === a && !open.tip.matches(":hover")) hide(); });
      const tip = tipOf(a);
      if (tip) {
        tip.addEventListener("mouseenter", function () { clearTimeout(timer); });
        tip.addEventListener("mouseleave", later);
      }
    });
    document.addEventListener("click", follow);
    document.addEventListener("keydown", function (ev) { if (ev.key === "Escape" && open) hide(); });
    window.addEventListener("scroll", function () { if (open) place(open.anchor, open.tip); }, {passive: true});
    window.addEventListener("resize", function () { if (open) place(open.anchor, open.tip); });
    const hash = decodeURIComponent(location.hash.slice(1));
    if (/^prov-(cell|code)-\d+$/.test(hash)) go(hash, false);
  }

  if (document.readyState === "loading") document.addEventListener("DOMContentLoaded", init);
  else init();
})();
