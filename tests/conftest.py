"""Shared pytest set-up: one fixed hypothesis profile, so that a test never passes or fails by luck."""
from hypothesis import settings

settings.register_profile("byhand", derandomize=True, max_examples=25, deadline=None, print_blob=True)
settings.load_profile("byhand")
