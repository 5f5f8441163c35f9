"""The A2A door: one configured agent served over A2A (`agent serve --a2a`), each A2A task a toolwire run in the run
store (docs/a2a.md). a2a-sdk is imported only here, and only when the command runs."""
