"""Crowd verification on Amazon Mechanical Turk: export HITs, ingest results."""
