// toolwire ui: one live stream per browser, shared by every tab open on this console (a SharedWorker). A browser
// keeps at most 6 connections to one host, and an event stream holds one for as long as its tab is open: with one
// stream per tab, a seventh tab never loads and a decision in any tab is never sent. Each tab tells this worker which
// page it shows ({page: its path}; {page: null} when it goes); the worker keeps one EventSource on /events watching
// every page shown, opened again when that set changes, and hands each tab what changed on its page.
"use strict";
var tabs = [];       // {port, page}
var shown = {};      // page -> {element id: the HTML last sent for it}
var stream = null;
var streamed = "";

function watching() {
  var pages = {};
  tabs.forEach(function (tab) { pages[tab.page] = true; });
  var keys = Object.keys(pages).sort();
  return keys.length ? "/events?" + keys.map(function (p) { return "watch=" + encodeURIComponent(p); }).join("&") : "";
}

function restream() {
  var url = watching();
  if (url === streamed) return;
  if (stream) stream.close();
  stream = null;
  streamed = url;
  if (!url) return;
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
    var page = message.data && message.data.page;
    tabs = tabs.filter(function (tab) { return tab.port !== port; });
    if (typeof page === "string") {
      tabs.push({ port: port, page: page });
      if (shown[page]) port.postMessage(shown[page]);  // what the stream last said, in case it is newer
    }
    restream();
  };
  port.start();
};
