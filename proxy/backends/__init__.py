"""Graph database backends behind one interface (see `base.py`)."""

from proxy.backends.base import Backend, ListResult, Result, Summary, Transaction, TxConfig

__all__ = ["Backend", "ListResult", "Result", "Summary", "Transaction", "TxConfig"]
