"""Each sub-command's one-line summary, for `toolwire --help`: listing the commands then imports none of them (the
list costs 0.05 s instead of every command's imports). tests/unit/test_cli_start.py checks that each line is the one
its command's own help starts with."""

SUMMARIES: dict[str, str] = {
    "agent": "Serve a configured agent to other programs: A2A agents (`serve --a2a`), AG-UI front ends (`--ag-ui`).",
    "answer": "Answer the question CALL_ID of RUN_ID (or its only question) asked: `toolwire approvals` shows it.",
    "approvals": "List waiting calls: run, call id, tool, arguments, args hash, since when.",
    "approve": "Approve CALL_ID of RUN_ID (or its only waiting call). Used once, for exactly these arguments.",
    "audit": "Show the tool server's audit trail: time, agent, tool, outcome, latency, result size, trace, replica.",
    "call": "Call TOOL once and print its result (exit 1 when the tool answers with an error).",
    "check": "Check a configuration file and load its tools without serving; exit 1 with the mistake.",
    "demo": "Run the support agent end to end: parallel calls, a repaired call, an approval, a resume.",
    "dev": "Serve FILE's tools over HTTP, restart when a .py file beside it changes, and open the MCP Inspector.",
    "eval": "Run the tasks in FILE (TOML or JSON) and judge the answers and the paths.",
    "reject": "Reject CALL_ID of RUN_ID (or its only waiting call) with a reason.",
    "replay": 'Re-run RUN_ID from its record, offline: "identical" (exit 0) or the first difference (exit 1).',
    "resume": "Continue RUN_ID: run approved calls, answer rejected ones, settle calls cut off by a crash, go on.",
    "run": "Run the agent on TASK until it answers or the harness stops it.",
    "runs": "List saved runs: id, task, status, steps, tokens, started, updated.",
    "serve": "Serve a tool registry over MCP: on stdio, or over HTTP with --http.",
    "submit": "Save a run of TASK and put it on the fleet's queue; prints its run id "
    "(`toolwire wait RUN_ID` follows it).",
    "tools": "List the tools the servers offer: name, arguments, annotations, description.",
    "trace": "Show or export the saved trace of a run.",
    "ui": "A run console in the browser: runs live, a run's steps and waterfall, approve or reject waiting calls.",
    "wait": "Block until RUN_ID ends (exit 0 done, 1 stopped or failed), waits for a person (4) "
    "or --timeout passes (5).",
    "worker": "Take submitted runs from the fleet's queue and drive them, until stopped (SIGTERM or Ctrl-C).",
}
