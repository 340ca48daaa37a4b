"""A FastAPI chat-history service on sqlmemory's AsyncSqlStorage (see README.md here)."""
