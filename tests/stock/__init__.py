"""Clients for the stock-tool tests: run in the stock tools' own environment, print JSON."""
