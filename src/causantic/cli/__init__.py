"""Command-line interface: a thin skin of click + rich over the :class:`~causantic.facade.Memory` facade.

Each command parses its arguments, calls one ``Memory`` method, and renders the result as a table for a
person or JSON (``--json``) for a script. Domain errors become ``click.ClickException`` here and
nowhere else.
"""
