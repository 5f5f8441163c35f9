// toolwire ui: one live stream per browser, shared by every tab open on this console (a SharedWorker). A browser
// keeps at most 6 connections to one host, and an event stream holds one for as long as its tab is open: with one
// stream per tab, a seventh tab never loads and a decision in any tab is never sent. Each tab tells this worker which
// page it shows ({page: its path}; {page: null} when it goes); the worker keeps one EventSource on /events watching
// every page shown, opened again when that set changes, and hands each tab what changed on its page. A stream ends
// with its session (log out); a tab of another session (someone else logged in) starts it again, with the cookie the
// browser holds now, so no tab is sent pages rendered for another person.
"use strict";
var tabs = [];       // {port, page}
var shown = {};      // page -> {element id: the HTML last sent for it}
var stream = null;
var streamed = "";
var viewer = "";     // the session (its public name) of the tab that joined last

function watching() {
  var pages = {};
  tabs.forEach(function (tab) { pages[tab.page] = true; });
  var keys = Object.keys(pages).sort();
  return keys.length ? "/events?" + keys.map(function (p) { return "watch=" + encodeURIComponent(p); }).join("&") : "";
}

function restream(joined) {
  var url = watching();
  var another = joined && joined !== viewer;
  if (joined) viewer = joined;
  if (url === streamed && !another && stream && stream.readyState !== EventSource.CLOSED) return;
  if (stream) stream.close();
  stream = null;
  streamed = url;
  if (!url) return;
  if (another) shown = {};
  stream = new EventSource(url);
  stream.addEventListener("fragments", function (event) {
    var parts = JSON.parse(event.data);
    Object.keys(parts).forEach(function (page) {
      var known = shown[page] || (shown[page] = {});
      var changed = {};
      var any = false;
      Object.keys(parts[page]).forEach(function (id) {
        if (known[id] !== parts[page][id]) { known[id] = changed[id] = parts[page][id]; any = true; }
      });
      if (any) tabs.forEach(function (tab) { if (tab.page === page) tab.port.postMessage(changed); });
    });
  });
}

self.onconnect = function (event) {
  var port = event.ports[0];
  port.onmessage = function (message) {
    var said = message.data || {};
    var page = said.page;
    tabs = tabs.filter(function (tab) { return tab.port !== port; });
    if (typeof page === "string") {
      tabs.push({ port: port, page: page });
      if (shown[page] && said.viewer === viewer) port.postMessage(shown[page]);  // the stream's latest, maybe newer
    }
    restream(typeof page === "string" ? said.viewer : "");
  };
  port.start();
};
