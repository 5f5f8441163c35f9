// @a2a-js/sdk's client (not ours) against `toolwire agent serve --a2a`: node js_client.mjs URL TOKEN NOTES HOLD
// Prints one JSON object of what it saw; tests/agent2agent/test_a2a_js_client.py checks it.
import { existsSync } from "node:fs";
import { join } from "node:path";
import { pathToFileURL } from "node:url";

const [url, token, notes, hold] = process.argv.slice(2);
const sdk = (path) => import(pathToFileURL(join(process.env.A2A_JS_DIR, "node_modules/@a2a-js/sdk/dist", path)).href);
const { ClientFactory, ClientFactoryOptions, JsonRpcTransportFactory } = await sdk("client/index.js");
const { Role, TaskState } = await sdk("index.js");

const authed = (input, init = {}) => {
  const headers = new Headers(init.headers);
  headers.set("Authorization", `Bearer ${token}`);
  return fetch(input, { ...init, headers });
};
const options = ClientFactoryOptions.createFrom(ClientFactoryOptions.default, {
  transports: [new JsonRpcTransportFactory({ fetchImpl: authed })],
});
const client = await new ClientFactory(options).createFromUrl(url);

let n = 0;
const message = (text, taskId = "") => ({
  messageId: `js-${++n}`, contextId: "", taskId, role: Role.ROLE_USER, parts: [{ content: { $case: "text", value: text } }],
  metadata: undefined, extensions: [], referenceTaskIds: [],
});
const request = (text, taskId = "", returnImmediately = false) => ({
  tenant: "", message: message(text, taskId), metadata: undefined,
  configuration: { acceptedOutputModes: [], taskPushNotificationConfig: undefined, historyLength: undefined, returnImmediately },
});
const state = (task) => TaskState[task.status.state];
const said = (task) => task.status.message.parts.map((p) => p.content.value).join("\n");
const seen = {};

const sent = await client.sendMessage(request('call shout {"text": "js"}'));
seen.send = [state(sent), said(sent)];
seen.get = state(await client.getTask({ tenant: "", id: sent.id }));

const events = [];
for await (const event of client.sendMessageStream(request('call shout {"text": "stream"}'))) {
  const value = event.payload.value;
  events.push(event.payload.$case === "statusUpdate" ? `statusUpdate:${TaskState[value.status.state]}` : event.payload.$case);
}
seen.stream = events;

const asking = await client.sendMessage(request(`call note ${JSON.stringify({ text: "from js", path: notes })}`));
seen.asks = state(asking);
const approved = await client.sendMessage(request("approve", asking.id));
seen.approved = [state(approved), said(approved)];

const held = await client.sendMessage(request(`call hold ${JSON.stringify({ path: hold })}`, "", true));
while (!existsSync(`${hold}.started`)) await new Promise((done) => setTimeout(done, 50));
seen.cancel = state(await client.cancelTask({ tenant: "", id: held.id, metadata: undefined }));
console.log(JSON.stringify(seen));
