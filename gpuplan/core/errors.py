"""Errors meant for a person, raised in the core and edges, rendered by the shells.

Every error carries one readable message. ``InputError`` (and subclasses) means bad
input: the CLI prints the message and exits 2. Nothing else about presentation lives
here.
"""

from __future__ import annotations


class GpuplanError(Exception):
    """Base class: a failure with a message written for the person at the terminal."""

    exit_code = 1

    def __init__(self, message: str) -> None:
        super().__init__(message)
        self.message = message

    def __str__(self) -> str:
        return self.message

    @property
    def lines(self) -> tuple[str, ...]:
        """The message as the lines a shell prints, each one problem (one by default)."""
        return (self.message,)


class InputError(GpuplanError):
    """Bad input from the user: a flag, a name, a file. Exit code 2."""

    exit_code = 2


class ScopeInputError(InputError):
    """A policy's scope section names what does not exist or cannot be read (a kubeconfig
    file, a context in it): bad input for the whole run, never one scope's problem line."""


class DataError(InputError):
    """A data file (catalog, policy, job file) is malformed at a known place."""

    def __init__(
        self,
        path: str,
        message: str,
        *,
        line: int | None = None,
        column: int | None = None,
        field: str | None = None,
    ) -> None:
        where = path
        if line is not None:
            where += f":{line}"
            if column is not None:
                where += f":{column}"
        prefix = f"{where}: "
        if field:
            prefix += f"{field}: "
        super().__init__(prefix + message)
        self.path = path
        self.line = line
        self.column = column
        self.field = field
        self.detail = message
