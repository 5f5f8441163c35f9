"""The console's HTML: a layout, and the fragments each page is made of. A fragment is one element with an id,
rendered by one function: the page draws it and the live stream (live.py) sends it again when it changed.
Everything from the store is escaped; no fragment shows a saved config (it may name secrets), only what a run did."""

import json
from collections.abc import Iterable
from datetime import datetime
from html import escape
from typing import Any

from toolwire_client import texts
from toolwire_client.fleet.overview import FleetInfo
from toolwire_client.run.state import RunState, StepRecord
from toolwire_client.store.base import DecisionRecord
from toolwire_client.store.events import LateOutcome
from toolwire_client.ui.questions import question_card
from toolwire_client.ui.reads import STATUSES, RunRow, RunView, Waiting
from toolwire_client.ui.svg import waterfall_svg
from toolwire_client.ui.token_parts import tokens_fragment
from toolwire_shared.results import ToolResult

RESULT_SHOWN = 600
"""Characters of a result shown at once; the rest behind a <details>."""


def e(value: object) -> str:
    return escape(str(value), quote=True)


def when(value: datetime | None) -> str:
    return "" if value is None else value.astimezone().strftime("%Y-%m-%d %H:%M:%S")


def layout(
    title: str,
    body: str,
    *,
    live: str | None,
    viewer: str,
    who: str,
    csrf: str | None,
    waiting: int,
    flash: Iterable[str],
) -> str:
    """The page around `body`; `live`: the page the live stream keeps current (its own path); `viewer`: the session's
    public name (live-worker.js starts its shared stream again when a tab of another session joins); `csrf`: the
    session's token for the log-out form (None: no login, nothing to log out of)."""
    notes = "".join(f'<p class="flash">{e(note)}</p>' for note in flash)
    logout = (
        f'<form method="post" action="/logout" class="inline"><input type="hidden" name="csrf" value="{e(csrf)}">'
        '<button class="link">log out</button></form>'
        if csrf
        else ""
    )
    live_attr = f' data-live="{e(live)}" data-viewer="{e(viewer)}"' if live else ""
    return (
        '<!doctype html><html lang="en"><head><meta charset="utf-8">'
        f'<meta name="viewport" content="width=device-width"><title>{e(title)} · toolwire</title>'
        '<link rel="stylesheet" href="/static/ui.css"></head>'
        f'<body{live_attr}><header><strong>toolwire</strong> <a href="/">runs</a> '
        f'<a href="/decisions">decisions {waiting_badge(waiting)}</a>'
        f'<span class="who">deciding as {e(who)} {logout}</span></header>'
        f'<main>{notes}{body}</main><script src="/static/live.js"></script></body></html>'
    )


def waiting_badge(waiting: int) -> str:
    return f'<span id="waiting-count" class="badge{" hot" if waiting else ""}">{waiting}</span>'


def login_page(message: str = "") -> str:
    said = f'<p class="refused">{e(message)}</p>' if message else ""
    return (
        '<!doctype html><html lang="en"><head><meta charset="utf-8"><title>log in · toolwire</title>'
        '<link rel="stylesheet" href="/static/ui.css"></head><body><main class="login"><h1>toolwire</h1>'
        f"{said}<p>Log in with your name and token, as the console's tokens file names you (<code>[people.NAME]"
        "</code>; an agent's tool token does not log in here); decisions are recorded under your name.</p>"
        '<form method="post" action="/login">'
        '<label>name <input name="name" autocomplete="username" required autofocus></label> '
        '<label>token <input type="password" name="token" autocomplete="current-password" required></label>'
        " <button>log in</button></form></main></body></html>"
    )


def refused_page(title: str, message: str, back: str) -> str:
    return (
        '<!doctype html><html lang="en"><head><meta charset="utf-8"><title>refused · toolwire</title>'
        '<link rel="stylesheet" href="/static/ui.css"></head><body><main>'
        f'<h1>{e(title)}</h1><p class="refused" id="refused">{e(message)}</p><p><a href="{e(back)}">back</a></p>'
        "</main></body></html>"
    )


# -- runs ------------------------------------------------------------------------------------------------------


def runs_body(fleet: str, runs: str, status: str, text: str) -> str:
    """The filters, then the fleet's line and the runs table (fragments: fleet_fragment, runs_fragment)."""
    options = "".join(
        f'<option value="{s}"{" selected" if s == status else ""}>{s.replace("_", " ")}</option>' for s in STATUSES
    )
    form = (
        '<form method="get" action="/" class="filters"><label>status <select name="status">'
        f'<option value="">any</option>{options}</select></label> '
        f'<label>text <input type="search" name="q" value="{e(text)}" placeholder="id, task or agent"></label> '
        "<button>filter</button></form>"
    )
    return f"<h1>Runs</h1>{form}{fleet}{runs}"


def fleet_fragment(fleet: FleetInfo | None) -> str:
    if fleet is None:
        return '<p id="fleet" class="dim">no worker fleet uses this store</p>'
    workers = ", ".join(fleet.workers_alive) or "none"
    return (
        f'<p id="fleet">fleet: {len(fleet.workers_alive)} worker(s) alive ({e(workers)}); '
        f"{fleet.queued} run(s) queued for a worker</p>"
    )


def runs_fragment(rows: list[RunRow]) -> str:
    head = "<tr><th>run</th><th>status</th><th>task</th><th>agent</th><th>steps</th><th>tokens</th><th>cost</th>"
    head += "<th>started</th><th>waiting for / driven by</th></tr>"
    body = []
    for row in rows:
        s = row.run
        cost = "" if s.cost_usd is None else f"{s.cost_usd:.4f} USD"
        indent = "↳ " * row.depth
        body.append(
            f'<tr class="run" data-run="{e(s.run_id)}"><td>{indent}<a href="/runs/{e(s.run_id)}">'
            f'{e(s.run_id)}</a></td><td class="status status-{e(s.status)}">{e(s.status)}</td>'
            f"<td>{e(clip(s.task, 90))}</td>"
            f"<td>{e(s.agent_name)}</td><td>{s.steps}</td><td>{s.tokens}</td><td>{cost}</td>"
            f"<td>{when(s.started_at)}</td><td>{e(row.waits_for)}</td></tr>"
        )
    if not body:
        body.append('<tr><td colspan="9" class="dim">no runs (match)</td></tr>')
    return f'<table id="runs" class="grid"><thead>{head}</thead><tbody>{"".join(body)}</tbody></table>'


def clip(text: str, limit: int) -> str:
    flat = " ".join(text.split())
    return flat if len(flat) <= limit else flat[: limit - 1] + "…"


# -- one run ---------------------------------------------------------------------------------------------------


def run_body(view: RunView, decide: str, resume_note: str, trace_url: str | None) -> str:
    root = view.root
    return (
        f"<h1>Run <code>{e(root.run_id)}</code></h1>{run_head(root, trace_url)}"
        f"<section><h2>Waiting for a person</h2>{decide}</section>{resume_fragment(resume_note)}"
        f"<section><h2>Steps</h2>{steps_fragment(view)}</section>"
        f"<section><h2>Waterfall</h2>{waterfall_fragment(root)}</section>"
        f"<section><h2>Where the tokens go</h2>{tokens_fragment(root)}</section>"
        f"<section><h2>Sub-agents</h2>{tree_fragment(view)}</section>"
    )


def run_head(state: RunState, trace_url: str | None) -> str:
    usage = state.usage
    cost = "cost unknown" if state.cost_usd is None else f"{state.cost_usd:.4f} USD"
    traced = bool(state.trace_id and state.trace_id.strip("0"))  # all zeros: no tracing was set up for the run
    if traced and state.trace_id and trace_url:
        link = trace_url.replace("{trace_id}", state.trace_id)
        trace = f'<a href="{e(link)}" rel="noreferrer">{e(state.trace_id)}</a>'
    else:
        trace = e(state.trace_id if traced else "none recorded")
    parent = (
        f' · sub-agent of <a href="/runs/{e(state.parent_run_id)}">{e(state.parent_run_id)}</a>'
        if state.parent_run_id
        else ""
    )
    end = state.report or state.stop_reason or ""
    answer = f'<p class="answer">answer: {e(state.final_answer)}</p>' if state.final_answer else ""
    return (
        f'<div id="run-head"><p><span class="status status-{e(state.status)}" id="run-status">{e(state.status)}</span>'
        f" {e(end)}</p><p>task: {e(state.task)}</p><p>agent {e(state.agent_name)} · model {e(state.model)} · "
        f"{len(state.steps)} steps · tokens {usage.input_tokens} in, {usage.output_tokens} out · {cost} · "
        f"started {when(state.started_at)} · trace {trace}{parent}</p>{answer}</div>"
    )


def resume_fragment(note: str) -> str:
    return f'<p id="resume" class="note">{e(note)}</p>' if note else '<p id="resume" hidden></p>'


def steps_fragment(view: RunView) -> str:
    head = (
        "<tr><th>step</th><th>model reply</th><th>call</th><th>arguments</th><th>result</th><th>error</th>"
        "<th>latency</th><th>decision</th></tr>"
    )
    rows = _step_rows(view, view.root) + "".join(_late_row(outcome) for outcome in view.late)
    return f'<table id="steps" class="grid steps"><thead>{head}</thead><tbody>{rows}</tbody></table>'


def _late_row(outcome: LateOutcome) -> str:
    """A call that completed on a worker after it lost the run: what it did, for people; the model never saw it."""
    return (
        f'<tr class="late"><td>late outcome</td><td colspan="2">{e(outcome.tool)} <code>{e(outcome.call_id)}</code>'
        f'</td><td colspan="5">{e(clip(outcome.detail, 300))}<div class="dim">completed on {e(outcome.recorded_by)}'
        " after it lost the run; not in the model's history</div></td></tr>"
    )


def _step_rows(view: RunView, state: RunState) -> str:
    rows = []
    for step in state.steps:
        rows += _rows_of_step(view, state, step)
    end = state.stop_reason or "no exit recorded (still running or waiting)"
    rows.append(
        f'<tr class="exit"><td>exit</td><td colspan="7">{e(state.status)}: {e(end)}'
        f"{': ' + e(state.report) if state.report else ''}</td></tr>"
    )
    return "".join(rows)


def _rows_of_step(view: RunView, state: RunState, step: StepRecord) -> list[str]:
    reply = f'<span class="kind">{e(step.kind)}</span> {e(clip(step.model_text, 300))}' if step.model_text else ""
    attempts = step.model_reply.attempts if step.model_reply else 1
    meta = f"{step.usage.input_tokens}→{step.usage.output_tokens} tok, {step.model_latency_s * 1000:.0f} ms"
    meta += f", {attempts} attempts" if attempts > 1 else ""
    meta += f", tools loaded: {e(', '.join(step.loaded) or 'none')}" if step.loaded is not None else ""  # tool search
    for edit in step.model_reply.applied_edits if step.model_reply else ():  # the provider's own context editing
        meta += f"; {e(texts.provider_cleared(edit))}"
    model_cell = f'<td>{reply}<div class="dim">{meta}</div></td>'
    if not step.tool_calls:
        return [
            f'<tr class="step" data-step="{step.index}"><td>{step.index}</td>{model_cell}<td colspan="6"></td></tr>'
        ]
    results = {r.call_id: r for r in step.results}
    waiting = {p.call.id: p for p in state.pending}
    rows = []
    for i, call in enumerate(step.tool_calls):
        first = i == 0
        cells = f"<td>{step.index if first else ''}</td>" + (model_cell if first else "<td></td>")
        result = results.get(call.id)
        args = json.dumps(call.arguments, sort_keys=True, indent=1, ensure_ascii=False)
        cells += f"<td><code>{e(call.name)}</code></td><td><pre>{e(args)}</pre></td>"
        if result is not None:
            cells += _result_cells(result)
        else:
            pending = waiting.get(call.id)
            said = f"not run: {pending.state.replace('_', ' ')}" if pending else "not run"
            cells += f'<td class="waiting">{e(said)}</td><td></td><td></td>'
        record = view.decided.get((state.run_id, call.id))
        cells += f"<td>{e(_decision(record))}</td>"
        rows.append(f'<tr class="step call" data-step="{step.index}" data-call="{e(call.id)}">{cells}</tr>')
        sub = state.children.get(call.id)
        child = view.children.get(sub.run_id) if sub is not None else None
        if child is not None:
            kind = "script" if child.script is not None else "sub-agent"  # a run_code call's script
            rows.append(
                f'<tr class="sub"><td></td><td colspan="7"><details open><summary>{kind} '
                f'<a href="/runs/{e(child.run_id)}">{e(child.run_id)}</a>: {e(clip(child.task, 120))}</summary>'
                f'<table class="grid steps">{_step_rows(view, child)}</table></details></td></tr>'
            )
    return rows


def _result_cells(result: ToolResult) -> str:
    text = result.content
    shown = e(text) if len(text) <= RESULT_SHOWN else f"{e(text[:RESULT_SHOWN])}<details><summary>all {len(text)} "
    if len(text) > RESULT_SHOWN:
        shown += f"characters</summary><pre>{e(text)}</pre></details>"
    kind = e(result.error_kind or "error") if result.is_error else ""
    marks = [f"{result.attempts} attempts"] if result.attempts > 1 else []
    marks += ["truncated"] if result.truncated else []
    latency = f"{result.duration_s * 1000:.0f} ms" + (f" ({', '.join(marks)})" if marks else "")
    css = ' class="error"' if result.is_error else ""
    return f'<td{css}><div class="result">{shown}</div></td><td{css}>{kind}</td><td>{latency}</td>'


def _decision(record: DecisionRecord | None) -> str:
    if record is None:
        return ""
    verb = "approved" if record.decision == "approve" else "rejected"
    reason = f": {record.reason}" if record.reason else ""
    return f"{verb} by {record.decided_by or '(not recorded)'}{reason}"


def waterfall_fragment(state: RunState) -> str:
    if not state.steps:
        return '<div id="waterfall" class="dim">no steps yet</div>'
    return f'<div id="waterfall">{waterfall_svg(state)}</div>'


def tree_fragment(view: RunView) -> str:
    def node(state: RunState) -> str:
        kids = [view.children[s.run_id] for s in state.children.values() if s.run_id in view.children]
        below = f"<ul>{''.join(node(k) for k in kids)}</ul>" if kids else ""
        return (
            f'<li><a href="/runs/{e(state.run_id)}">{e(state.run_id)}</a> <span class="status status-'
            f'{e(state.status)}">{e(state.status)}</span> {e(clip(state.task, 80))}{below}</li>'
        )

    if not view.children:
        return '<div id="tree" class="dim">no sub-agents</div>'
    return f'<div id="tree"><ul class="tree">{node(view.root)}</ul></div>'


# -- decisions -------------------------------------------------------------------------------------------------


def decide_fragment(waiting: list[Waiting], csrf: str, back: str) -> str:
    """A card per call that waits for a person: the exact call and what an approval binds, approve / reject; or the
    question its tool asked, with its form (questions.py)."""
    if not waiting:
        return '<div id="decide" class="dim">no call waits for a person</div>'
    cards = []
    for w in waiting:
        head = _call_head(w)
        if w.pending.waits_for_input:
            cards.append(question_card(w.state.run_id, w.pending, head, csrf, back))
        else:
            cards.append(_approval_card(w, head, csrf, back))
    return f'<div id="decide">{"".join(cards)}</div>'


def _call_head(w: Waiting) -> str:
    """Which run and call a card is about (the same lines for an approval and a question)."""
    p, state = w.pending, w.state
    sub = (
        f' (sub-agent of <a href="/runs/{e(state.parent_run_id)}">{e(state.parent_run_id)}</a>)'
        if state.parent_run_id
        else ""
    )
    return (
        f'<p>run <a href="/runs/{e(state.run_id)}">{e(state.run_id)}</a>{sub}: {e(clip(state.task, 120))}</p>'
        f"<p>call <code>{e(p.call.id)}</code>: tool <code>{e(p.call.name)}</code>, waiting since {when(p.since)}</p>"
    )


def _approval_card(w: Waiting, head: str, csrf: str, back: str) -> str:
    p, state = w.pending, w.state
    call = p.call
    args = json.dumps(call.arguments, sort_keys=True, indent=2, ensure_ascii=False)
    why = f"<p>waits because: {e(p.approval_reason)}</p>" if p.approval_reason else ""
    action = f"/runs/{e(state.run_id)}/calls/{e(call.id)}/decide"
    return (
        f'<form method="post" action="{action}" class="card decision" data-run="{e(state.run_id)}" '
        f'data-call="{e(call.id)}">{head}'
        f'{why}<pre class="args">{e(args)}</pre>'
        f'<p class="binds">Approving binds exactly this: call {e(call.id)} of run {e(state.run_id)}, tool '
        f"{e(call.name)} with these arguments (hash <code>{e(p.args_hash)}</code>), used once. If the arguments "
        "change, the approval does not apply and the call does not run.</p>"
        f'<input type="hidden" name="csrf" value="{e(csrf)}"><input type="hidden" name="hash" '
        f'value="{e(p.args_hash)}"><input type="hidden" name="next" value="{e(back)}">'
        '<div class="buttons"><button name="decision" value="approve" class="approve">Approve</button> '
        '<input type="text" name="reason" maxlength="2000" '
        'placeholder="why (the model reads it; needed to reject)">'
        ' <button name="decision" value="reject" class="reject">Reject</button></div></form>'
    )


def decided_fragment(records: list[DecisionRecord]) -> str:
    rows = "".join(
        f'<tr><td><a href="/runs/{e(d.run_id)}">{e(d.run_id)}</a></td><td>{e(d.call_id)}</td><td>{e(d.tool)}</td>'
        f"<td>{e(_decision(d))}</td><td>{when(d.at)}</td></tr>"
        for d in records
    )
    head = "<tr><th>run</th><th>call</th><th>tool</th><th>decision</th><th>when</th></tr>"
    return f'<table id="decided" class="grid"><thead>{head}</thead><tbody>{rows}</tbody></table>'


def answered_fragment(answers: list[dict[str, Any]]) -> str:
    """The latest answers to tools' questions (store/answers.recent_answers), with who gave them."""
    rows = "".join(
        f'<tr><td><a href="/runs/{e(a["run_id"])}">{e(a["run_id"])}</a></td><td>{e(a["call_id"])}</td>'
        f"<td>{e(a['tool'])}</td><td>{e(a['action'])}{': ' + e(clip(a['content'], 200)) if a['content'] else ''}"
        f" by {e(a['by'] or '(not recorded)')}</td><td>{e(a['at'])}</td></tr>"
        for a in answers
    )
    head = "<tr><th>run</th><th>call</th><th>tool</th><th>answer</th><th>when</th></tr>"
    return f'<table id="answered" class="grid"><thead>{head}</thead><tbody>{rows}</tbody></table>'


def decisions_body(decide: str, decided: str, answered: str) -> str:
    return (
        f"<h1>Waiting for a person</h1>{decide}<h2>Latest decisions</h2>{decided}"
        f"<h2>Latest answers to tools' questions</h2>{answered}"
    )


def answer_refused_body(w: Waiting, csrf: str, back: str, refused: str, posted: dict[str, str]) -> str:
    """The question again, after an answer that did not fit: why, and the form filled with what was sent."""
    card = question_card(w.state.run_id, w.pending, _call_head(w), csrf, back, refused=refused, posted=posted)
    return f"<h1>Not recorded</h1>{card}"
