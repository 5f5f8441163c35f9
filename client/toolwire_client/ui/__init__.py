"""The run console (`toolwire ui`): runs, a run and the calls waiting for a person, as server-rendered pages that
update themselves over server-sent events. A decision goes through the same functions as `toolwire approve`/`reject`
(fleet/decide.py); a local run whose decisions are all made is resumed here as `toolwire resume` would."""

from toolwire_client.ui.app import build_app
from toolwire_client.ui.state import UiSettings

__all__ = ["UiSettings", "build_app"]
