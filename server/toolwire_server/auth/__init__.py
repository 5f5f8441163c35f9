"""Who may call what: the grants (static tokens, the access config) and OAuth 2.1 access tokens."""
