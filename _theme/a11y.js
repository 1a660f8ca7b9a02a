// Accessibility fixes for what exists only once the page's scripts have run (WCAG 2.1 AA; issue 22). Loaded on
// every page (_config.yml, html_js_files); _ext/a11y.py and _templates/ fix the HTML that Sphinx writes.
// 1. The colour-mode button is a two-state toggle, "Dark mode", pressed or not. The theme cycles light → auto →
//    dark, so on a light machine the first click seemed to do nothing; every click now changes the page.
// 2. The live widgets' sliders (noUiSlider handles, role="slider") are switched off on the static page
//    (tools/widgets-setup.js) but stayed in the Tab order with no name and no disabled state. Each handle is named
//    by its widget's label, marked aria-disabled, and taken out of the Tab order, as a disabled <input> would be;
//    the slider's box (label, track, readout) is a group marked aria-disabled too, as the inactive control it is.
// 3. Search results: Sphinx's summaries are raw page text, so math shows as TeX source (`\(W_O^\top\)`). A formula
//    cut at either end of the summary is dropped, the rest is typeset by MathJax (which _ext/a11y.py loads on the
//    search page), and the search-term highlighter is kept out of it.
(function () {
  "use strict";

  // ---- 1. colour mode: light ↔ dark
  function setMode(mode) {
    const root = document.documentElement;
    root.dataset.mode = mode;
    root.dataset.theme = mode;
    // as the theme's own setTheme does (pydata-sphinx-theme 0.17.1)
    document.querySelectorAll(".dropdown-menu").forEach(function (el) {
      el.classList.toggle("dropdown-menu-dark", mode === "dark");
    });
    try {
      localStorage.setItem("mode", mode);
      localStorage.setItem("theme", mode);
    } catch (err) {
      // storage switched off: the mode lasts for this page only
    }
  }

  function syncPressed() {
    const dark = document.documentElement.dataset.theme === "dark";
    document.querySelectorAll(".theme-switch-button").forEach(function (b) {
      b.setAttribute("aria-pressed", dark ? "true" : "false");
    });
  }

  // capture phase, on the document: runs before the theme's own listener on the button, which it replaces
  document.addEventListener(
    "click",
    function (ev) {
      const button = ev.target instanceof Element && ev.target.closest(".theme-switch-button");
      if (!button) return;
      ev.stopImmediatePropagation();
      ev.preventDefault();
      setMode(document.documentElement.dataset.theme === "dark" ? "light" : "dark");
    },
    true,
  );
  // the theme sets the mode at start-up (and follows the system in "auto" mode): aria-pressed follows data-theme
  new MutationObserver(syncPressed).observe(document.documentElement, {
    attributes: true,
    attributeFilter: ["data-theme"],
  });

  // ---- 2. the live widgets' sliders, switched off with no kernel
  let labels = 0;
  function nameHandles(root) {
    for (const handle of root.querySelectorAll(".noUi-handle[role='slider']:not([data-en-a11y])")) {
      handle.setAttribute("data-en-a11y", "1");
      const widget = handle.closest(".widget-slider, .jupyter-widgets");
      const label = widget && widget.querySelector(":scope > .widget-label");
      if (label && label.textContent.trim()) {
        if (!label.id) label.id = "en-widget-label-" + ++labels;
        handle.setAttribute("aria-labelledby", label.id);
      } else {
        handle.setAttribute("aria-label", "slider");
      }
      if (handle.closest(".noUi-target[disabled]")) {
        handle.setAttribute("aria-disabled", "true");
        handle.setAttribute("tabindex", "-1");
        // the label and readout belong to a switched-off control (a disabled <input> gets this from HTML)
        if (widget && widget !== handle) {
          widget.setAttribute("role", "group");
          widget.setAttribute("aria-disabled", "true");
        }
      }
    }
    // a row of toggle buttons whose every button is switched off is an inactive control too, label and all
    for (const row of root.querySelectorAll(".widget-toggle-buttons:not([data-en-a11y])")) {
      const buttons = [...row.querySelectorAll("button")];
      if (buttons.length && buttons.every((b) => b.disabled)) {
        row.setAttribute("data-en-a11y", "1");
        row.setAttribute("role", "group");
        row.setAttribute("aria-disabled", "true");
        const label = row.querySelector(":scope > .widget-label");
        if (label && label.textContent.trim()) {
          if (!label.id) label.id = "en-widget-label-" + ++labels;
          row.setAttribute("aria-labelledby", label.id);
        }
      }
    }
    // ipywidgets 8 writes a missing tooltip as title="null"
    for (const el of root.querySelectorAll(".widget-label[title='null'], .widget-readout[title='null']")) {
      el.removeAttribute("title");
    }
  }

  // ---- 3. math in the search results
  const MATH = /\\\(|\\\)|\\\[|\\\]/g;
  const OPENS = { "\\(": "\\)", "\\[": "\\]" };

  // [text, isMath] pieces of a summary; a formula cut by the summary's ends is left out
  function pieces(text) {
    const out = [];
    let at = 0;
    let open = null;
    let start = 0;
    MATH.lastIndex = 0;
    for (let m; (m = MATH.exec(text)); ) {
      const d = m[0];
      if (open === null && OPENS[d]) {
        out.push([text.slice(at, m.index), false]);
        open = d;
        start = m.index;
      } else if (open !== null && d === OPENS[open]) {
        out.push([text.slice(start, m.index + 2), true]);
        open = null;
        at = m.index + 2;
      } else if (open === null) {
        // a closing delimiter with no opening one: the summary began inside a formula
        out.length = 0;
        out.push(["…", false]);
        at = m.index + 2;
      }
    }
    out.push([open === null ? text.slice(at) : "…", false]); // an unclosed formula: its text came before it
    return out.filter(function (p) {
      return p[0];
    });
  }

  function typesetSummary(p) {
    if (!/\\[()[\]]/.test(p.textContent)) return; // no math in this summary
    const parts = pieces(p.textContent);
    p.replaceChildren();
    for (const [text, isMath] of parts) {
      if (!isMath) {
        p.append(text);
        continue;
      }
      const span = document.createElement("span");
      span.className = "nohighlight en-search-math"; // Sphinx's highlighter skips text whose parent is .nohighlight
      span.textContent = text;
      p.append(span);
    }
    const mj = window.MathJax;
    if (mj && mj.startup && mj.startup.promise) {
      mj.startup.promise.then(function () {
        return mj.typesetPromise ? mj.typesetPromise([p]) : null;
      }).catch(function () {});
    }
  }

  function watchSearch() {
    if (typeof Search === "undefined" || !Search.makeSearchSummary) return; // eslint-disable-line no-undef
    const make = Search.makeSearchSummary; // eslint-disable-line no-undef
    Search.makeSearchSummary = function () { // eslint-disable-line no-undef
      const p = make.apply(this, arguments);
      if (p) typesetSummary(p);
      return p;
    };
  }

  function start() {
    syncPressed();
    watchSearch();
    nameHandles(document);
    // the widget manager renders after the page's load event; handle what it adds
    let queued = false;
    new MutationObserver(function () {
      if (queued) return;
      queued = true;
      requestAnimationFrame(function () {
        queued = false;
        nameHandles(document);
      });
    }).observe(document.body, { childList: true, subtree: true });
  }
  if (document.readyState === "loading") {
    document.addEventListener("DOMContentLoaded", start);
  } else {
    start();
  }
})();
