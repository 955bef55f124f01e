"""The HTTP service (FastAPI)."""
