"""The on/off switch of a signal that is emitted only once its SDK provider is installed (metrics, audit log
records): setup.py (or a test) turns it on; while it is off, the module's record functions return at once."""


class Switch:
    __slots__ = ("on",)

    def __init__(self) -> None:
        self.on = False

    def enable(self, on: bool = True) -> None:
        """Called by setup (or a test) once the provider is installed."""
        self.on = on

    def enabled(self) -> bool:
        return self.on
