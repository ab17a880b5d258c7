"""Bolt front end: handshake, chunking, the server state machine and the listener."""

from proxy.bolt.server import serve_bolt_stream, start_bolt_server

__all__ = ["serve_bolt_stream", "start_bolt_server"]
