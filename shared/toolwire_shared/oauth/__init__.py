"""OAuth 2.1 resource servers, as toolwire serves them: the `[oauth]` table (settings.py), the issuer's keys
(keys.py), the token verified to a subject of the tokens file (verifier.py), and the metadata and challenges
(resource.py). The tool server's /mcp (toolwire_server.transports.http) and the agent doors (`toolwire agent serve`,
toolwire_client.cli.door_auth) share them."""
