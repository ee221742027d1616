"""The loopback socket `serve --http` and the dashboard listen on: a port that cannot be taken is
one sentence saying why and what to do."""

from __future__ import annotations

import errno
import socket

import pytest

from causantic.errors import CausanticError
from causantic.net import bind_loopback


def test_a_port_this_user_may_not_take_is_not_called_in_use(monkeypatch: pytest.MonkeyPatch) -> None:
    # Tests run as root here, who may bind any port: the refusal an ordinary user gets for a port
    # below 1024 is raised as the kernel raises it.
    def refuse(self: socket.socket, address: tuple[str, int]) -> None:
        raise PermissionError(errno.EACCES, "Permission denied")

    monkeypatch.setattr(socket.socket, "bind", refuse)
    with pytest.raises(CausanticError) as raised:
        bind_loopback(80)
    assert "in use" not in str(raised.value)
    assert str(raised.value) == (
        "Port 80 on 127.0.0.1 is not open to this user (Permission denied; ports below 1024 need "
        "administrator rights); choose another with --port."
    )
