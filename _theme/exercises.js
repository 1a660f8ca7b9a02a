// Answer boxes on the static page: the book's exercises checked in the browser, with no kernel and no network.
// Each box carries the answer and the known wrong answers that byhand computed when the page was built
// (byhand.exercises.answer_box); this script enables the box and gives the same verdicts as check() in a notebook.
(function () {
  "use strict";

  function parseNumber(text) {
    var t = text.trim().replace(/\u2212/g, "-").replace(/\s+/g, "");
    if (!/^[-+]?(\d+\.?\d*|\.\d+)(e[-+]?\d+)?$/i.test(t)) return NaN;
    return Number(t);
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
    function run() {
      var x = parseNumber(input.value);
      box.classList.remove("en-right", "en-wrong");
      if (isNaN(x)) {
        feedback.textContent = "Type a number, such as 0.25 or -1.5e-3.";
        return;
      }
      var v = verdict(data, x);
      feedback.textContent = v.text;
      box.classList.add(v.ok ? "en-right" : "en-wrong");
    }
    button.addEventListener("click", run);
    input.addEventListener("keydown", function (e) { if (e.key === "Enter") run(); });
    box.setAttribute("data-ready", "1");
  }

  function init() { document.querySelectorAll(".en-exercise:not([data-ready])").forEach(enable); }
  if (document.readyState === "loading") document.addEventListener("DOMContentLoaded", init);
  else init();
})();
