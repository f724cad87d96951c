"""The Console now lives at runner.console, below every stage; this name
stays only until the workflow package is renamed."""

from runner.console import Console

__all__ = ["Console"]
