"""API keys never leak (errors, reprs, logs), and make_model builds the adapter a spec names."""

import logging
import ssl

import pytest

from helpers.fake_providers import FakeProvider, Reply
from toolwire_client.models import DEFAULT_MODELS, MissingApiKey, default_spec, make_model
from toolwire_client.models.anthropic import AnthropicModel
from toolwire_client.models.base import ModelCallFailed
from toolwire_client.models.openai_chat import OpenAIChatModel
from toolwire_client.models.retry import RetryPolicy
from toolwire_shared.messages import UserMessage

SECRET = "sk-live-DO-NOT-LEAK-0123456789abcdef"


def echoes_the_key(status: int) -> Reply:
    """Real providers sometimes quote (part of) the key back; a worst case quotes all of it."""
    return Reply(
        status=status,
        body={
            "type": "error",
            "error": {"type": "authentication_error", "message": f"Incorrect API key provided: {SECRET}."},
        },
    )


@pytest.mark.parametrize("kind", ["anthropic", "openai"])
async def test_key_stays_out_of_errors_reprs_and_logs(
    kind: str, fake: FakeProvider, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.DEBUG)
    fake.push(echoes_the_key(401), echoes_the_key(500), echoes_the_key(500))
    retry = RetryPolicy(max_tries=2, base_s=0.001, cap_s=0.001)  # real (tiny) sleeps: the default sleep path
    model = (
        AnthropicModel("m", api_key=SECRET, base_url=fake.anthropic_url, retry=retry)
        if kind == "anthropic"
        else OpenAIChatModel("m", api_key=SECRET, base_url=fake.openai_url, retry=retry)
    )
    seen = {"x-api-key": SECRET} if kind == "anthropic" else {"authorization": f"Bearer {SECRET}"}
    for _ in range(2):  # once not retried (401), once retried then given up (500)
        with pytest.raises(ModelCallFailed) as caught:
            await model.complete([UserMessage(content="hi")], [])
        text = f"{caught.value} {caught.value.reason} {caught.value!r} {caught.value.args}"
        assert SECRET not in text and "Incorrect API key provided: [redacted]" in text
    assert fake.requests[0].headers.items() >= seen.items()  # it really was sent
    assert SECRET not in repr(model) and "api_key=set" in repr(model)
    assert SECRET not in caplog.text
    await model.aclose()


def test_missing_key_is_a_clear_error(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("ANTHROPIC_API_KEY", raising=False)
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    with pytest.raises(MissingApiKey, match="set ANTHROPIC_API_KEY"):
        AnthropicModel("claude-sonnet-4-5")
    with pytest.raises(MissingApiKey, match="neither ANTHROPIC_API_KEY nor OPENAI_API_KEY"):
        default_spec()
    # a local OpenAI-compatible server needs no key
    local = OpenAIChatModel("qwen", base_url="http://127.0.0.1:1/v1")
    assert repr(local).endswith("api_key=none)")


async def test_make_model_specs(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("OPENAI_BASE_URL", raising=False)
    monkeypatch.delenv("ANTHROPIC_BASE_URL", raising=False)
    monkeypatch.setenv("OPENAI_API_KEY", "sk-o")
    monkeypatch.delenv("ANTHROPIC_API_KEY", raising=False)
    assert default_spec() == f"openai:{DEFAULT_MODELS['openai']}"
    monkeypatch.setenv("ANTHROPIC_API_KEY", "sk-a")
    assert default_spec() == f"anthropic:{DEFAULT_MODELS['anthropic']}"

    claude = make_model("anthropic:claude-opus-4-1", anthropic_version="2023-06-01", stream=True)
    assert isinstance(claude, AnthropicModel) and claude.stream
    assert (claude.model, claude.version, claude.server_address, claude.server_port) == (
        "claude-opus-4-1",
        "2023-06-01",
        "api.anthropic.com",
        443,
    )
    local = make_model("openai:llama3", base_url="http://127.0.0.1:8080/v1")
    assert isinstance(local, OpenAIChatModel)
    assert (local.model, local.server_address, local.server_port, local.empty_content) == (
        "llama3",
        "127.0.0.1",
        8080,
        "",
    )
    default = make_model()
    assert isinstance(default, AnthropicModel) and default.model == DEFAULT_MODELS["anthropic"]
    with pytest.raises(ValueError, match="unknown model 'gemini:pro': use one of anthropic:"):
        make_model("gemini:pro")
    for m in (claude, local, default):
        await m.aclose()


def test_make_model_scripted_is_lazy() -> None:
    scripted = pytest.importorskip("toolwire_client.models.scripted")
    model = make_model("scripted:recovers")
    assert isinstance(model, scripted.ScriptedModel) and model.provider == "scripted"


def test_model_clients_share_one_verifying_tls_context() -> None:
    """Each adapter's own HTTP client takes the process's TLS context (not one of its own, ~30 ms of CPU to build),
    and that context still verifies certificates and host names against a loaded CA bundle."""
    from toolwire_shared.tls import ssl_context

    contexts = {
        id(m._client._transport._pool._ssl_context)  # type: ignore[attr-defined]
        for m in (OpenAIChatModel("m", api_key="k"), AnthropicModel("m", api_key="k"))
    }
    assert contexts == {id(ssl_context())}
    context = ssl_context()
    assert context.verify_mode == ssl.CERT_REQUIRED and context.check_hostname
    assert context.cert_store_stats()["x509_ca"] > 0
