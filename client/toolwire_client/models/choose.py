"""Which model a run gets: a `provider:name` spec built through the provider table, or, with no spec, the provider
whose key is set, else the test model."""

import logging
import os
from typing import Unpack

from toolwire_client.models.base import Model
from toolwire_client.models.http import MissingApiKey
from toolwire_client.models.options import ModelOptions
from toolwire_client.models.providers import PROVIDERS, UnknownModel, spec_help
from toolwire_shared.options import refuse_unknown

DEFAULT_MODELS = {p.prefix: p.default_model for p in PROVIDERS.values() if p.default_model}
NO_KEY_MODEL = "test"
"""What `make_model()` with no spec runs when no provider key is set: the test model, no network, which calls each of
your tools once with arguments made from its schema and answers with what came back (models/test_model.py)."""

log = logging.getLogger("toolwire.client.models")


def key_envs() -> list[str]:
    """Each provider key variable once (both OpenAI APIs read OPENAI_API_KEY)."""
    return list(dict.fromkeys(p.key_env for p in PROVIDERS.values() if p.key_env))


def default_spec() -> str:
    """The model to use when none is named: the first provider in the table whose API key is set."""
    for provider in PROVIDERS.values():
        if provider.key_env and os.environ.get(provider.key_env):
            return provider.example
    keys = " nor ".join(key_envs())
    raise MissingApiKey(f"no model named and neither {keys} is set; use --model {spec_help()}")


def spec_or_script(script: str) -> str:
    """$TOOLWIRE_MODEL, else a provider whose key is set, else `scripted:SCRIPT` (no key, no network): how an
    example picks its model."""
    if os.environ.get("TOOLWIRE_MODEL"):
        return os.environ["TOOLWIRE_MODEL"]
    if any(os.environ.get(key) for key in key_envs()):
        return default_spec()
    return f"scripted:{script}"


def make_model(spec: str | None = None, **options: Unpack[ModelOptions]) -> Model:
    """Build a model from 'provider:name' ('provider' alone takes its default model) with `options` (ModelOptions:
    base_url, api_key, stream, ...). With no spec: the provider whose API key is set (`default_spec()`), else
    NO_KEY_MODEL (the test model), with a warning saying so (the CLI calls `default_spec()` itself, so `toolwire run`
    with no key and no --model is still an error)."""
    refuse_unknown(options, ModelOptions.__optional_keys__, "make_model()")
    if not spec:
        try:
            spec = default_spec()
        except MissingApiKey:
            spec = NO_KEY_MODEL
            keys = " or ".join(key_envs())
            log.warning(
                "no model named and no %s set: running the %s model (each tool called once with arguments made from "
                "its schema, no network)",
                keys,
                spec,
            )
    prefix, _, name = spec.partition(":")
    provider = PROVIDERS.get(prefix.strip().lower())
    name = name.strip() or (provider.default_model or "" if provider else "")
    if provider is None or not name:
        raise UnknownModel(f"unknown model {spec!r}: use {spec_help()}")
    return provider.build(name, options)
