// toolwire ui: keep the page's fragments current from its server-sent event stream (no build step, no library).
// Each event carries {element id: new HTML}; an element being typed into is left alone until it loses focus, and one
// whose form holds what the person typed or chose is left alone until that form is sent (or the page reloaded).
(function () {
  "use strict";
  var src = document.body.getAttribute("data-live");
  if (!src || !window.EventSource) return;
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
  var events = new EventSource(src);
  events.addEventListener("fragments", function (event) {
    var parts = JSON.parse(event.data);
    Object.keys(parts).forEach(function (id) { swap(id, parts[id]); });
    document.body.setAttribute("data-updated", String(Date.now()));
  });
})();
