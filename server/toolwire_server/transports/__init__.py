"""How clients reach the server: stdio, Streamable HTTP (with its fast path, sessions and the guards in front of
it) and the worker processes of `toolwire serve --workers`. Everything below the transports is the same for each."""
