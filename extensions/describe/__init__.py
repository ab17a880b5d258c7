"""describe(): the compact description of the graph for LLM agents (docs/describe-design.md)."""

from .describe import describe_procedure, describe_text

__all__ = ["describe_procedure", "describe_text"]
