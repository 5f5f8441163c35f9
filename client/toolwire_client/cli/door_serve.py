"""How `agent serve` runs a door under uvicorn: holding its kind's row in the run store (fleet/door_kinds.py) for as
long as it serves, so that a door of the other kind on the same store (one that drives its runs, one whose runs the
worker fleet drives) is refused in one line before it listens."""

from typing import Any

import click

from toolwire_client.cli._store import store_name


def serve_door(app: Any, host: str, port: int, db: str | None, fleet: bool, door: str, **options: Any) -> None:
    """Serve `app` until stopped; `door` names it to a door of the other kind that this one refuses."""
    import asyncio

    import uvicorn

    from toolwire_client.fleet.door_kinds import OtherKindOfDoor, holding, kind_of

    config = uvicorn.Config(app, host=host, port=port, log_level="warning", lifespan="on", **options)
    server = uvicorn.Server(config)

    async def serve() -> None:
        async with holding(db, kind_of(fleet), door):
            await server.serve()

    try:
        with asyncio.Runner(loop_factory=config.get_loop_factory()) as runner:  # uvicorn's loop (uvloop), as run()
            runner.run(serve())
    except OtherKindOfDoor as exc:
        raise click.ClickException(f"{store_name(db)}: {exc}") from None
