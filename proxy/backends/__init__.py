"""Graph database backends behind one interface (`core/backend.py`)."""

from core.backend import Backend, ListResult, Result, Summary, Transaction, TxConfig

__all__ = ["Backend", "ListResult", "Result", "Summary", "Transaction", "TxConfig"]
