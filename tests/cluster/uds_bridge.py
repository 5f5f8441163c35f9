"""A Unix socket in front of a TCP port inside a network namespace: `python uds_bridge.py SOCKET PORT`, run with
`ip netns exec NS`, lets the test (outside every namespace the cluster made) reach a process listening on
127.0.0.1:PORT there. The socket is a file: no address outside the cluster's namespaces is needed."""

import asyncio
import contextlib
import sys


async def _pipe(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
    try:
        while chunk := await reader.read(65536):
            writer.write(chunk)
            await writer.drain()
    except (ConnectionError, OSError):
        pass
    finally:
        with contextlib.suppress(OSError):
            writer.close()


async def main(socket_path: str, port: int) -> None:
    async def bridged(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        try:
            up_reader, up_writer = await asyncio.open_connection("127.0.0.1", port)
        except OSError:
            writer.close()
            return
        await asyncio.gather(_pipe(reader, up_writer), _pipe(up_reader, writer))

    server = await asyncio.start_unix_server(bridged, path=socket_path)
    async with server:
        await server.serve_forever()


if __name__ == "__main__":
    asyncio.run(main(sys.argv[1], int(sys.argv[2])))
