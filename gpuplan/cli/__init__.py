"""The command-line shell: parse, call a use case, render. No business logic here."""
