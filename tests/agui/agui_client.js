// @ag-ui/client's HttpAgent consuming a toolwire run: the run until its interrupt, then a resume approving every
// interrupt, then the answer. The client checks the event order itself (verifyEvents) and rejects a stream that
// breaks it. Prints what the client ended with as JSON: events seen, interrupts, messages, state.
// Usage: node agui_client.js URL TOKEN THREAD TASK
const { HttpAgent } = require("@ag-ui/client");

async function main() {
  const [url, token, thread, task] = process.argv.slice(2);
  const agent = new HttpAgent({ url, threadId: thread, headers: { Authorization: `Bearer ${token}` } });
  agent.addMessage({ id: "user-1", role: "user", content: task });
  const events = [];
  const seen = { onEvent: ({ event }) => { events.push(event.type); console.error(event.type); } };
  await agent.runAgent({ runId: "leg-1" }, seen);
  const interrupts = agent.pendingInterrupts.map((i) => ({ id: i.id, reason: i.reason, toolCallId: i.toolCallId, subagentRunId: i.subagentRunId }));
  const resume = agent.pendingInterrupts.map((i) => ({ interruptId: i.id, status: "resolved", payload: { approved: true } }));
  const finished = await agent.runAgent({ runId: "leg-2", resume }, seen);
  console.log(JSON.stringify({ events, interrupts, result: finished.result, messages: agent.messages, state: agent.state }));
}

main().catch((error) => {
  console.error(String(error && error.stack ? error.stack : error));
  process.exit(1);
});
