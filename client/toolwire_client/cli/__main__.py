"""`python -m toolwire_client.cli` is the `toolwire` command (what a run spawns for its stdio tool servers)."""

from toolwire_client.cli import main

main()
