"""The local web dashboard: ``causantic dashboard`` serves it on 127.0.0.1.

- :mod:`~causantic.dashboard.server` binds the loopback socket and runs uvicorn;
- :mod:`~causantic.dashboard.security` checks Host, Origin, the per-run token and CSRF;
- :mod:`~causantic.dashboard.app` maps routes to pages and renders templates (``templates/``,
  static assets in ``static/``);
- :mod:`~causantic.dashboard.pages` gathers each page's data from :class:`~causantic.facade.Memory`;
- :mod:`~causantic.dashboard.story` adapts recall/predict answers to what the search page draws;
- :mod:`~causantic.dashboard.text` turns chunk text into sections, highlights and short values.

Like the CLI and the MCP server it calls the facade and never another interface.
"""
