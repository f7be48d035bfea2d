"""samfuse package."""
