// Set-up for the vendored ipywidgets HTML manager; runs after require.js and before embed-amd.js.
// 1. Tell require.js where the manager lives, relative to the page. The manager loads its icon fonts from the
//    folder of its own module URL; without this mapping that would be `<page dir>/@jupyter-widgets/…` (a 404).
require.config({
  paths: {
    "@jupyter-widgets/html-manager/dist": document.documentElement.dataset.content_root + "_static/widgets",
  },
});
// 2. The manager typesets widget labels with MathJax 2's `MathJax.Hub.Queue`; the book loads MathJax 3, which has
//    no Hub. Translate the one call it makes into MathJax 3's `typesetPromise`.
(function () {
  const hub = {
    Queue: function (...jobs) {
      for (const job of jobs) {
        if (Array.isArray(job) && job[0] === "Typeset" && window.MathJax && window.MathJax.typesetPromise) {
          window.MathJax.typesetPromise([job[2]]).catch(function () {});
        }
      }
    },
  };
  window.MathJax = window.MathJax || {};
  window.MathJax.Hub = hub;
  const startup = window.MathJax.startup || {};
  window.MathJax.startup = Object.assign({}, startup, {
    ready: function () {
      (startup.ready || function () { window.MathJax.startup.defaultReady(); })();
      window.MathJax.Hub = window.MathJax.Hub || hub; // MathJax 3 rebuilds its global object at start-up
    },
  });
})();
// 3. The page never pretends. With no kernel behind them, the live widgets cannot redraw: a slider would move while
//    its figure stayed put. Before the manager reads the saved state (it renders on `load`), every control in it is
//    saved as disabled; the figure that could not follow the controls is hidden (CSS, `.byhand-no-kernel` in
//    _theme/book.css); and one line beside each widget points to the static slider below it and to a live session
//    (the page's own launch links: Binder, Colab, JupyterHub). This file is loaded only by the built pages, so in
//    JupyterLab, Binder and Colab the widgets keep working as usual.
(function () {
  function disableSavedControls() {
    const states = document.querySelectorAll('script[type="application/vnd.jupyter.widget-state+json"]');
    for (const script of states) {
      let data;
      try {
        data = JSON.parse(script.textContent);
      } catch (err) {
        continue; // the manager reports a broken state itself
      }
      for (const model of Object.values(data.state || {})) {
        if (model.state && Object.prototype.hasOwnProperty.call(model.state, "disabled")) {
          model.state.disabled = true;
        }
      }
      script.textContent = JSON.stringify(data);
    }
  }

  function launchLinks() {
    const links = [];
    for (const a of document.querySelectorAll(".dropdown-launch-buttons a[href]")) {
      const name = (a.getAttribute("title") || a.textContent || "").replace(/^\s*Launch on\s*/i, "").trim();
      if (name) links.push([name, a.getAttribute("href")]);
    }
    return links;
  }

  function nextSlider(el) {
    for (const slider of document.querySelectorAll(".byhand-slider")) {
      if (el.compareDocumentPosition(slider) & Node.DOCUMENT_POSITION_FOLLOWING) return slider;
    }
    return null;
  }

  function addNotes() {
    const links = launchLinks();
    let n = 0;
    for (const view of document.querySelectorAll('script[type="application/vnd.jupyter.widget-view+json"]')) {
      const area = view.parentElement;
      if (!area || area.querySelector(".byhand-kernel-note")) continue;
      area.classList.add("byhand-no-kernel");
      const note = document.createElement("p");
      note.className = "byhand-kernel-note";
      note.setAttribute("role", "note");
      note.append("These controls need a running Python kernel, so they are switched off on this page. ");
      const slider = nextSlider(view);
      if (slider) {
        if (!slider.id) slider.id = "byhand-static-slider-" + ++n;
        const a = document.createElement("a");
        a.href = "#" + slider.id;
        a.textContent = "Scrub the static slider below";
        note.append(a, " instead, or run the chapter live");
      } else {
        note.append("Run the chapter live");
      }
      if (links.length) {
        note.append(" on ");
        links.forEach(function ([name, href], i) {
          const a = document.createElement("a");
          a.href = href;
          a.target = "_blank";
          a.rel = "noopener";
          a.textContent = name;
          note.append(i === 0 ? "" : i === links.length - 1 ? " or " : ", ", a);
        });
        note.append(", or in JupyterLab.");
      } else {
        note.append(" in Binder, Colab or JupyterLab.");
      }
      area.insertBefore(note, view);
    }
  }

  function run() {
    disableSavedControls();
    addNotes();
  }
  if (document.readyState === "loading") {
    document.addEventListener("DOMContentLoaded", run);
  } else {
    run();
  }
})();
