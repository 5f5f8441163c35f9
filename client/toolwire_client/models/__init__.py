"""Model adapters: each turns the neutral message list into one provider's wire format and back.

Names load on first use (toolwire_shared/lazy.py): a module that needs only `models.base` (the run's records do)
does not load the HTTP client, the retry policy and the provider table."""

from typing import TYPE_CHECKING

from toolwire_shared.lazy import loader

PUBLIC: dict[str, tuple[str, ...]] = {
    "base": ("Model", "ModelCallFailed", "ModelReply"),
    "choose": ("DEFAULT_MODELS", "NO_KEY_MODEL", "default_spec", "key_envs", "make_model", "spec_or_script"),
    "http": ("MissingApiKey",),
    "providers": ("PROVIDERS", "UnknownModel", "spec_help"),
    "retry": ("RetryPolicy",),
}
_WHERE = {name: module for module, names in PUBLIC.items() for name in names}
__all__ = sorted(_WHERE)

if TYPE_CHECKING:
    from toolwire_client.models.base import Model as Model
    from toolwire_client.models.base import ModelCallFailed as ModelCallFailed
    from toolwire_client.models.base import ModelReply as ModelReply
    from toolwire_client.models.choose import DEFAULT_MODELS as DEFAULT_MODELS
    from toolwire_client.models.choose import NO_KEY_MODEL as NO_KEY_MODEL
    from toolwire_client.models.choose import default_spec as default_spec
    from toolwire_client.models.choose import key_envs as key_envs
    from toolwire_client.models.choose import make_model as make_model
    from toolwire_client.models.choose import spec_or_script as spec_or_script
    from toolwire_client.models.http import MissingApiKey as MissingApiKey
    from toolwire_client.models.providers import PROVIDERS as PROVIDERS
    from toolwire_client.models.providers import UnknownModel as UnknownModel
    from toolwire_client.models.providers import spec_help as spec_help
    from toolwire_client.models.retry import RetryPolicy as RetryPolicy

__getattr__ = loader(__name__, _WHERE, globals())
