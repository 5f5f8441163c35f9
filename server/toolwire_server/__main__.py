"""`python -m toolwire_server MODULE:ATTR --stdio|--http ...`: the same command as `toolwire serve`."""

from toolwire_server.cli import serve

if __name__ == "__main__":
    serve(prog_name="toolwire serve")
