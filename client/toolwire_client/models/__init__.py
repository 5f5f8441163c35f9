"""Model adapters: each turns the neutral message list into one provider's wire format and back."""

from toolwire_client.models.base import Model, ModelCallFailed, ModelReply

__all__ = ["Model", "ModelCallFailed", "ModelReply"]
