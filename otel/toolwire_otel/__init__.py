"""OpenTelemetry for toolwire: one trace per run, GenAI and MCP semantic-convention names."""
