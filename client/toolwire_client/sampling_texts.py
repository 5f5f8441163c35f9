"""What a tool server is told when it asks for the run's model (MCP sampling, tools/sampling.py) or its roots
(tools/server_asks.py) and is refused, and the notes the run's user sees of what was sampled. Imports nothing of
toolwire_client, as texts.py does."""


def sampling_not_allowed(server: str) -> str:
    return (
        f"sampling is not allowed for server {server}; the user can allow it with --allow-sampling {server} "
        f"(or sampling = true under [servers.{server}] in a servers file)"
    )


def _refused(why: str) -> str:
    """The one form of every refusal of a request this run will not answer: the asking server reads why."""
    return f"sampling refused: {why}"


def sampling_cap(server: str, cap: int) -> str:
    return _refused(
        f"this run already answered its limit of {cap} sampling request(s) (server {server} asked for one more); "
        "the user can raise it with toolwire run --max-sampling N"
    )


def sampling_over_budget(why: str) -> str:
    return _refused(why)


def sampling_tool_choice(server: str) -> str:
    return _refused(
        f'server {server} asked that a tool must be called (toolChoice "required"), which the run\'s model cannot '
        'be made to do per request; ask with toolChoice "auto"'
    )


def sampling_run_tool_choice(server: str, choice: str) -> str:
    return _refused(
        f"server {server} asked for sampling with tools, but this run forces its own tool choice ({choice!r}, "
        "--tool-choice); ask without tools"
    )


def sampling_tool_name(server: str, name: str) -> str:
    return _refused(
        f"server {server} offered the tool {name!r}, whose name the model's provider refuses (names must match "
        "^[a-zA-Z0-9_-]{1,64}$)"
    )


def sampling_no_run(server: str, why: str) -> str:
    return _refused(f"server {server} asked while {why}, so no run can be charged for it")


def sampling_model_failed(reason: str) -> str:
    return f"sampling failed: the run's model call failed: {reason}"


def sampled(server: str, tokens: int, answered: int, cap: int) -> str:
    return f"server {server} borrowed the run's model (sampling): {tokens} tokens, request {answered} of at most {cap}"


SAMPLING_CUT_OFF = "sampling cut off: the tool call ended before the run's model answered"


def sampling_context_ignored(server: str, include: str) -> str:
    return (
        f"server {server} asked for sampling with includeContext={include!r}; no context is added (only its own "
        "messages are sent)"
    )


def sampling_media(kind: str, mime: str, size: int) -> str:
    return f"[{kind}: {mime}, {size} bytes; not shown to the model here]"


def roots_not_given(server: str) -> str:
    return f"roots are not offered to server {server}; the user can give folders with toolwire run --root PATH"
