"""A Flask chat-history service on sqlmemory's SqlStorage (see README.md here)."""
