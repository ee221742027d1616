"""The MCP server Claude Code talks to, on the official ``mcp`` SDK (v2, ``MCPServer``).

- ``app``: the lifespan's :class:`AppContext` (services opened once, one call at a time, errors
  turned into tool errors, background warm-up of the embedding model).
- ``models``: pydantic output models, published as each tool's output schema.
- ``tools``: the nine tools, each a typed function over one service.
- ``server``: building the server (instructions, middleware) and running it on stdio or HTTP.
"""
