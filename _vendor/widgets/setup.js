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
