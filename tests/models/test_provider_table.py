"""The provider table is the one list of model specs: the factory, the help text and the error all read it."""

import pytest

from helpers.cli import packaged_scripts, run_toolwire
from toolwire_client.models import PROVIDERS, ModelCallFailed, ModelReply, make_model
from toolwire_client.models.options import ModelOptions
from toolwire_client.models.providers import Provider
from toolwire_shared.messages import Message
from toolwire_shared.tools import ToolSpec


def test_run_help_lists_every_provider_and_every_scripted_model() -> None:
    proc = run_toolwire("run", "--help")
    assert proc.returncode == 0, proc.stderr
    help_text = " ".join(proc.stdout.split())  # click wraps lines
    for provider in PROVIDERS.values():
        assert f"{provider.prefix}:" in help_text
    built_in = packaged_scripts()
    for name in built_in:
        assert name in help_text
    assert {"recovers", "repeats", "wanders", "support_demo"} <= set(built_in)


def test_an_unknown_provider_names_the_valid_ones() -> None:
    with pytest.raises(ValueError) as caught:
        make_model("antropic:claude")
    assert all(f"{p}:" in str(caught.value) for p in PROVIDERS)


class EchoModel:
    provider, server_address, server_port = "echo", None, None

    def __init__(self, name: str) -> None:
        self.model = name

    async def complete(self, messages: list[Message], tools: list[ToolSpec]) -> ModelReply:
        raise ModelCallFailed("not a real model")

    async def aclose(self) -> None:
        return None


def test_a_provider_is_one_row(monkeypatch: pytest.MonkeyPatch) -> None:
    def build(name: str, options: ModelOptions) -> EchoModel:
        return EchoModel(name)

    monkeypatch.setitem(PROVIDERS, "echo", Provider("echo", build, "e1", None, "an echo"))
    assert make_model("echo:e2").model == "e2"
    assert make_model("echo").model == "e1"


def test_a_misspelt_model_option_is_refused() -> None:
    """The HTTP adapters take their options as HttpOptions says: an unknown one is a TypeError naming it, not
    silently dropped."""
    from toolwire_client.models.anthropic import AnthropicModel

    with pytest.raises(TypeError, match="unexpected keyword arguments: timeout"):
        AnthropicModel("claude-x", api_key="k", timeout=5)  # type: ignore[call-arg]


async def test_make_model_refuses_a_misspelt_option_and_passes_the_rest_on() -> None:
    """make_model takes ModelOptions: each goes to the adapter that has it, an unknown one is a TypeError naming it."""
    with pytest.raises(TypeError, match="make_model\\(\\) got unexpected keyword arguments: max_token"):
        make_model("openai:gpt-x", api_key="k", max_token=5)  # type: ignore[call-arg]
    claude = make_model("anthropic:claude-x", api_key="k", anthropic_version="2099-01-01", prompt_cache="1h")
    assert (claude.version, claude.prompt_cache) == ("2099-01-01", "1h")  # type: ignore[attr-defined]
    chat = make_model("openai:gpt-x", api_key="k", max_tokens=7, prompt_cache="off", timeout_s=3.0)
    assert chat.max_tokens == 7 and chat._client.timeout.read == 3.0  # type: ignore[attr-defined]
    for model in (claude, chat):
        await model.aclose()  # their own HTTP clients
