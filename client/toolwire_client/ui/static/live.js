// toolwire ui: keep the page's fragments current from its server-sent event stream (no build step, no library).
// Each event carries {element id: new HTML}; an element being typed into is left alone until it loses focus.
(function () {
  "use strict";
  var src = document.body.getAttribute("data-live");
  if (!src || !window.EventSource) return;
  var pending = {};
  function swap(id, html) {
    var el = document.getElementById(id);
    if (!el) return;
    if (el.contains(document.activeElement) && document.activeElement.tagName === "INPUT") {
      pending[id] = html;
      return;
    }
    var holder = document.createElement("template");
    holder.innerHTML = html;
    var fresh = holder.content.firstElementChild;
    if (fresh && fresh.id === id) el.replaceWith(fresh);
  }
  document.addEventListener("focusout", function () {
    setTimeout(function () {
      Object.keys(pending).forEach(function (id) { var html = pending[id]; delete pending[id]; swap(id, html); });
    }, 0);
  });
  var events = new EventSource(src);
  events.addEventListener("fragments", function (event) {
    var parts = JSON.parse(event.data);
    Object.keys(parts).forEach(function (id) { swap(id, parts[id]); });
    document.body.setAttribute("data-updated", String(Date.now()));
  });
})();
