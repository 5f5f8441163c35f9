// toolwire ui: keep the page's fragments current from the console's server-sent event stream, shared by the tabs
// through live-worker.js (no build step, no library).
// Each event carries {element id: new HTML}; an element being typed into is left alone until it loses focus, and one
// whose form holds what the person typed or chose is left alone until that form is sent (or the page reloaded).
(function () {
  "use strict";
  var src = document.body.getAttribute("data-live");
  var viewer = document.body.getAttribute("data-viewer");
  if (!src) return;
  var pending = {};
  // Something typed or chosen in a form of the element (an answer half filled in, a reason): a swap would lose it.
  function edited(el) {
    var fields = el.querySelectorAll("input, select, textarea");
    for (var i = 0; i < fields.length; i++) {
      var f = fields[i];
      if (f.type === "hidden") continue;
      if (f.type === "checkbox" || f.type === "radio") { if (f.checked !== f.defaultChecked) return true; }
      else if (f.tagName === "SELECT") {
        var initial = 0;  // with no option marked selected, a select starts on its first
        for (var j = 0; j < f.options.length; j++) if (f.options[j].defaultSelected) initial = j;
        if (f.selectedIndex !== initial) return true;
      } else if (f.value !== f.defaultValue) return true;
    }
    return false;
  }
  function swap(id, html) {
    var el = document.getElementById(id);
    if (!el) return;
    var active = document.activeElement;
    if ((el.contains(active) && /^(INPUT|SELECT|TEXTAREA)$/.test(active.tagName)) || edited(el)) {
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
  function apply(parts) {
    Object.keys(parts).forEach(function (id) { swap(id, parts[id]); });
    document.body.setAttribute("data-updated", String(Date.now()));
  }
  if (window.SharedWorker) {  // one stream for all this browser's tabs (live-worker.js says why)
    var worker = new SharedWorker("/static/live-worker.js");
    worker.port.onmessage = function (message) { apply(message.data); };
    worker.port.start();
    worker.port.postMessage({ page: src, viewer: viewer });
    window.addEventListener("pagehide", function () { worker.port.postMessage({ page: null }); });
    window.addEventListener("pageshow", function (event) {
      if (event.persisted) worker.port.postMessage({ page: src, viewer: viewer });
    });
  } else if (window.EventSource) {
    var events = new EventSource("/events?watch=" + encodeURIComponent(src));
    events.addEventListener("fragments", function (event) {
      var parts = JSON.parse(event.data)[src];
      if (parts) apply(parts);
    });
  }
})();
