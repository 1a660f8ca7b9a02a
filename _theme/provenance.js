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

  function go(id, focus) {
    const target = document.getElementById(id);
    if (!target) return false;
    for (let d = target.closest("details"); d; d = d.parentElement && d.parentElement.closest("details")) d.open = true;
    target.querySelectorAll("details").forEach(function (d) { d.open = true; });  // a hide-cell's own toggle
    hide();
    target.scrollIntoView({block: "center"});
    if (focus) {
      if (!target.hasAttribute("tabindex")) target.setAttribute("tabindex", "-1");
      target.focus({preventScroll: true});
    }
    target.classList.remove("prov-flash");
    void target.offsetWidth;  // restart the highlight if it is still running
    target.classList.add("prov-flash");
    setTimeout(function () { target.classList.remove("prov-flash"); }, 2000);
    return true;
  }

  function follow(ev) {
    const link = ev.target.closest("a.prov-num, a.prov-go, a.prov-cell-link");
    if (!link) return;
    const id = (link.getAttribute("href") || "").replace(/^#/, "");
    if (go(id, true)) {
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
