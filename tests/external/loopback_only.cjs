// Preloaded with `node --require` by the tests: a server that listens on a bare port (server-everything's
// `app.listen(PORT)`) listens on 127.0.0.1 only, never on every interface of the machine.
const net = require("node:net");
const listen = net.Server.prototype.listen;
net.Server.prototype.listen = function (...args) {
  const bare = typeof args[0] === "number" || (typeof args[0] === "string" && /^\d+$/.test(args[0]));
  if (bare && typeof args[1] !== "string") args.splice(1, 0, "127.0.0.1");
  return listen.apply(this, args);
};
