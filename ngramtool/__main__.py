"""``python -m ngramtool`` runs the command line."""

from .cli.app import entry

entry()
