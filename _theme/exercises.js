// Answer boxes on the static page: the book's exercises checked in the browser, with no kernel and no network.
// Each box carries the answer and the known wrong answers that byhand computed when the page was built
// (byhand.exercises.answer_box); this script enables the box and gives the same verdicts as check() in a notebook.
// The verdict goes into the box's live region (role="status"), so a screen reader reads it out after Check/Enter.
(function () {
  "use strict";

  var ACCEPTED = "such as 0.25, -1.5, 2.5e-3 or 1/3";
  var NUMBER = /^[-+]?(\d+\.?\d*|\.\d+)(e[-+]?\d+)?$/i;

  // What a reader typed, read as a number: {value} when it is one, {error} (one sentence to show) when not.
  // Accepted: a decimal number with a point, an optional exponent (2.5e-3), the typographic minus (−), spaces
  // anywhere (1 000), and one fraction a/b of two such numbers (1/3 is exact; 0.333 is not). A comma is refused
  // with its own message: "0,5" is a half in much of Europe but "1,000" is a thousand in English, so it is ambiguous.
  function parseAnswer(text) {
    var t = text.trim().replace(/[\u2212\u2012\u2013]/g, "-").replace(/\s+/g, "");
    if (t === "") return { error: "Type your answer first: a number " + ACCEPTED + "." };
    if (/^[-+]?(inf(inity)?|\u221e|nan)$/i.test(t))
      return { error: "That is not a finite number. Every answer here is finite: type a number " + ACCEPTED + "." };
    if (t.indexOf(",") >= 0)
      return { error: "Write decimals with a point and no commas: 0.5 rather than 0,5, 1000 rather than 1,000." };
    var parts = t.split("/");
    if (parts.length > 2 || !parts.every(function (p) { return NUMBER.test(p); }))
      return { error: "Type a number " + ACCEPTED + "." };
    var x = Number(parts[0]);
    if (parts.length === 2) {
      var d = Number(parts[1]);
      if (d === 0) return { error: "That fraction divides by zero. Type a number " + ACCEPTED + "." };
      x = x / d;
    }
    if (!isFinite(x))
      return { error: "That number is too large for the page to hold (it overflows to infinity); no answer here is " +
                      "that large. Type a number " + ACCEPTED + "." };
    return { value: x };
  }

  function verdict(data, x) {
    if (Math.abs(x - data.answer) <= data.tol) return { ok: true, text: "Right." };
    for (var i = 0; i < data.wrong.length; i++) {
      if (Math.abs(x - data.wrong[i][1]) <= (data.wrong[i].length > 2 ? data.wrong[i][2] : data.tol)) return { ok: false, text: "Not yet: " + data.wrong[i][0] };
    }
    var side = x > data.answer ? "high" : "low";
    return { ok: false, text: "Not yet: that is too " + side + ". Check each step against the chapter's numbers." };
  }

  function enable(box) {
    var data = JSON.parse(box.getAttribute("data-exercise"));
    var input = box.querySelector("input");
    var button = box.querySelector("button");
    var feedback = box.querySelector(".en-feedback");
    input.disabled = false;
    button.disabled = false;
    feedback.textContent = "";
    function say(text) {
      // A live region announces a change: the same verdict twice in a row is emptied first, then set again.
      if (feedback.textContent === text) {
        feedback.textContent = "";
        window.setTimeout(function () { feedback.textContent = text; }, 50);
      } else {
        feedback.textContent = text;
      }
    }
    function run() {
      var x = parseAnswer(input.value);
      box.classList.remove("en-right", "en-wrong");
      if (x.error) {
        input.setAttribute("aria-invalid", "true");
        say(x.error);
        return;
      }
      input.removeAttribute("aria-invalid");
      var v = verdict(data, x.value);
      say(v.text);
      box.classList.add(v.ok ? "en-right" : "en-wrong");
    }
    button.addEventListener("click", run);
    input.addEventListener("keydown", function (e) { if (e.key === "Enter") { e.preventDefault(); run(); } });
    box.setAttribute("data-ready", "1");
  }

  // Under Node (tests/test_exercises.py), the parser and the verdicts are exported; there is no page to enable.
  if (typeof module === "object" && module.exports) { module.exports = { parseAnswer: parseAnswer, verdict: verdict }; return; }
  function init() { document.querySelectorAll(".en-exercise:not([data-ready])").forEach(enable); }
  if (document.readyState === "loading") document.addEventListener("DOMContentLoaded", init);
  else init();
})();

// Wide things on a narrow screen (WCAG 1.4.10, Reflow). A display, code block, output or table that is wider than
// its box scrolls sideways inside it (book.css). A phone or a Mac draws no scrollbar until one scrolls, so the cut
// content would look complete: each box that overflows becomes a named, focusable region (Tab to it, then the arrow
// keys scroll it) and gets a line under it that says it continues. The boxes are measured again after MathJax, when
// a "Show all …" box opens, when the window changes size and when widgets render.
// Figures drawn smaller than half their own size (a phone) get a button that shows them full size, in such a box.
(function () {
  "use strict";
  if (typeof document === "undefined") return;  // under Node: nothing to measure

  var BOXES = [
    ["div.math mjx-container[display='true']", "Wide equation"],
    [".cell_output pre", "Wide output"],
    ["div.highlight pre", "Wide code"],
    [".pst-scrollable-table-container", "Wide table"],
    [".prov-scroll", "Table of this page's numbers"],
    [".byhand-slider", "Wide figure player"],
    [".widget-subarea", "Wide widget"],
    [".byhand-figure", "Figure at full size"],
    [".byhand-figure-data > [role=region]", "Data of this figure"],
  ];

  // the cue goes under the box; under a display's div.math, which lays out its children in a row
  function cueAfter(box) { return box.closest("div.math") || box; }
  function cueFor(box) {
    var next = cueAfter(box).nextElementSibling;
    return next && next.classList.contains("byhand-scroll-cue") ? next : null;
  }

  function mark(box, name) {
    var over = box.scrollWidth > box.clientWidth && box.getClientRects().length > 0;  // even 1 px draws a scrollbar
    var cue = cueFor(box);
    if (over) {
      box.classList.add("byhand-overflows");
      if (!box.hasAttribute("data-byhand-region")) {
        // a box that byhand already named (a figure's data table) keeps its name when it fits again
        if (box.hasAttribute("aria-label")) box.setAttribute("data-byhand-label", box.getAttribute("aria-label"));
        box.setAttribute("data-byhand-region", "1");
        box.setAttribute("tabindex", "0");
        box.setAttribute("role", "region");
        box.setAttribute("aria-label", name + ", wider than the page: scroll sideways, or focus it and use the arrow keys");
      }
      if (!cue) {
        cue = document.createElement("div");
        cue.className = "byhand-scroll-cue";
        cue.setAttribute("aria-hidden", "true");  // the region's name says it
        cue.textContent = "Continues to the right \u2192 scroll sideways";
        cueAfter(box).insertAdjacentElement("afterend", cue);
      }
    } else if (box.hasAttribute("data-byhand-region")) {
      box.classList.remove("byhand-overflows");
      box.removeAttribute("data-byhand-region");
      if (box.hasAttribute("data-byhand-label")) {
        box.setAttribute("aria-label", box.getAttribute("data-byhand-label"));  // named by byhand: stays a region
        box.removeAttribute("data-byhand-label");
      } else {
        box.removeAttribute("role");
        box.removeAttribute("aria-label");
        box.setAttribute("tabindex", "-1");
      }
      if (cue) cue.remove();
    }
  }

  var figures = 0;
  function zoomable(img) {
    // a figure of the chapters (not a theme icon, a slider frame or a widget) drawn at under half its own width
    if (img.closest(".byhand-slider, .widget-subarea") || !img.naturalWidth) return;
    var wrap = img.parentElement.classList.contains("byhand-figure") ? img.parentElement : null;
    var small = img.clientWidth > 0 && img.clientWidth < 0.6 * img.naturalWidth;
    if (!wrap && !small) return;
    if (!wrap) {
      wrap = document.createElement("div");
      wrap.className = "byhand-figure";
      wrap.id = "byhand-figure-" + (++figures);
      img.insertAdjacentElement("beforebegin", wrap);
      wrap.appendChild(img);
      var button = document.createElement("button");
      button.type = "button";
      button.className = "byhand-figure-zoom";
      button.setAttribute("aria-pressed", "false");
      button.setAttribute("aria-controls", wrap.id);
      button.textContent = "Show this figure full size";
      function toggle() {
        var on = !wrap.classList.contains("byhand-zoomed");
        wrap.classList.toggle("byhand-zoomed", on);
        button.setAttribute("aria-pressed", on ? "true" : "false");
        button.textContent = on ? "Fit this figure to the page" : "Show this figure full size";
        if (on) img.style.width = img.naturalWidth + "px"; else img.style.width = "";
        measure();
      }
      button.addEventListener("click", toggle);
      img.addEventListener("click", toggle);
      wrap.insertAdjacentElement("afterend", button);
    }
    var btn = wrap.nextElementSibling;
    while (btn && !btn.classList.contains("byhand-figure-zoom")) btn = btn.nextElementSibling;
    if (btn) btn.hidden = !small && !wrap.classList.contains("byhand-zoomed");
  }

  function measure() {
    document.querySelectorAll(".bd-article .cell_output img").forEach(zoomable);
    BOXES.forEach(function (pair) {
      document.querySelectorAll(".bd-article " + pair[0]).forEach(function (box) { mark(box, pair[1]); });
    });
  }

  var timer = null;
  function soon() { clearTimeout(timer); timer = setTimeout(measure, 100); }
  window.byhandMeasureScrollBoxes = measure;  // for tools/check_keyboard.py and tools/check_html.py

  function init() {
    var mj = window.MathJax && window.MathJax.startup && window.MathJax.startup.promise;
    (mj || Promise.resolve()).then(measure);
    window.addEventListener("resize", soon);
    window.addEventListener("load", soon);
    document.addEventListener("toggle", soon, true);  // a "Show all …" box opened or closed
    var main = document.getElementById("main-content");
    if (main && window.MutationObserver) {
      new MutationObserver(function (records) {
        // our own cues and buttons are mutations too: only react to others
        for (var i = 0; i < records.length; i++) {
          var nodes = Array.prototype.slice.call(records[i].addedNodes);
          if (nodes.some(function (n) { return !(n.classList && (n.classList.contains("byhand-scroll-cue")
              || n.classList.contains("byhand-figure-zoom") || n.classList.contains("byhand-figure"))); })) { soon(); return; }
        }
      }).observe(main, { subtree: true, childList: true });
    }
  }
  if (document.readyState === "loading") document.addEventListener("DOMContentLoaded", init);
  else init();
})();
