"""A loopback model for the fleet bench: an OpenAI Chat Completions server on 127.0.0.1 that answers every request
after a fixed delay (200 ms by default), in its own process so its CPU is not the bench's or a worker's.

Its script, read from the messages like a model would: get_order for the task's order id, then calculator for that
order's total with 18 % GST, then the final answer. A thread per connection sleeps out the delay, so one slow answer
never holds up another; the listen backlog is deep enough for hundreds of runs connecting at once (the stdlib's 5
would drop SYNs and add 1 s retransmits to the measured latency).

`python -m bench.loopback_model [DELAY_S]` prints its port on the first line of stdout, then serves until SIGTERM.
"""

import json
import re
import signal
import socket
import sys
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

ORDER_ID = re.compile(r"\b[A-Z]\d{3}\b")
CALLS_PER_RUN = 3
"""Model calls per run of this script: get_order, calculator, the answer."""


def _completion(text: str | None = None, call: tuple[str, str, dict[str, Any]] | None = None) -> dict[str, Any]:
    message: dict[str, Any] = {"role": "assistant", "content": text, "refusal": None}
    if call is not None:
        call_id, name, arguments = call
        message["tool_calls"] = [
            {"id": call_id, "type": "function", "function": {"name": name, "arguments": json.dumps(arguments)}}
        ]
    return {
        "id": "chatcmpl-loopback",
        "object": "chat.completion",
        "created": int(time.time()),
        "model": "loopback",
        "choices": [
            {"index": 0, "message": message, "logprobs": None, "finish_reason": "tool_calls" if call else "stop"}
        ],
        "usage": {"prompt_tokens": 200, "completion_tokens": 20, "total_tokens": 220},
    }


def _tool_value(content: Any) -> Any:
    """A tool message's content as a value (MCP wraps a scalar result as {"result": x})."""
    if isinstance(content, list):  # content parts
        content = "".join(part.get("text", "") for part in content if isinstance(part, dict))
    try:
        value = json.loads(content)
    except (TypeError, ValueError):
        return content
    return value["result"] if isinstance(value, dict) and set(value) == {"result"} else value


def reply(body: dict[str, Any]) -> dict[str, Any]:
    """The next turn of the script for this conversation."""
    messages: list[dict[str, Any]] = body.get("messages", [])
    tools = [m for m in messages if m.get("role") == "tool"]
    task = next((str(m.get("content")) for m in messages if m.get("role") == "user"), "")
    found = ORDER_ID.search(task)
    order_id = found.group(0) if found else "A123"
    if not tools:
        return _completion(call=("call_1", "get_order", {"order_id": order_id}))
    if len(tools) == 1:
        order = _tool_value(tools[0].get("content"))
        if isinstance(order, dict) and "unit_price" in order:
            expression = f"{order['unit_price']} * {order['qty']} * 1.18"
        else:
            expression = "2500 * 2 * 1.18"
        return _completion(call=("call_2", "calculator", {"expression": expression}))
    total = _tool_value(tools[-1].get("content"))
    return _completion(f"Order {order_id} costs {total} with GST.")


class _Server(ThreadingHTTPServer):
    request_queue_size = 1024
    daemon_threads = True

    def handle_error(self, request: Any, client_address: Any) -> None:
        """A worker killed -9 resets its connections: expected in the bench, not worth a traceback."""
        if not isinstance(sys.exc_info()[1], ConnectionError):
            super().handle_error(request, client_address)


def serve(delay_s: float) -> _Server:
    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def setup(self) -> None:
            super().setup()
            self.request.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)

        def log_message(self, format: str, *args: Any) -> None:
            pass

        def do_POST(self) -> None:
            raw = self.rfile.read(int(self.headers.get("content-length", "0")))
            if not raw:  # the client went away mid-request (a worker killed -9): nobody to answer
                self.close_connection = True
                return
            time.sleep(delay_s)  # this connection's thread only
            payload = json.dumps(reply(json.loads(raw))).encode()
            self.send_response(200)
            self.send_header("content-type", "application/json")
            self.send_header("content-length", str(len(payload)))
            self.end_headers()
            self.wfile.write(payload)

    return _Server(("127.0.0.1", 0), Handler)


def main() -> None:
    delay_s = float(sys.argv[1]) if len(sys.argv) > 1 else 0.2
    server = serve(delay_s)
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(0))
    print(server.server_address[1], flush=True)
    server.serve_forever(poll_interval=0.05)


if __name__ == "__main__":
    main()
