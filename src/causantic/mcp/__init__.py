"""The MCP server Claude Code talks to, on the official ``mcp`` SDK (v2, ``MCPServer``).

- ``app``: the lifespan's :class:`AppContext` (one :class:`~causantic.facade.Memory` opened once, one
  call at a time, errors turned into tool errors, background warm-up of the embedding model).
- ``tools``: the nine tools, each a typed function over one ``Memory`` method answering in text (no
  structured content: Claude Code would show the model that instead of the text).
- ``server``: building the server (instructions, middleware) and running it on stdio or HTTP;
  ``http``: the HTTP transport (``causantic serve --http``), on 127.0.0.1 behind a bearer token.
"""
