"""setup.py kept for tools that still expect it; metadata lives in pyproject.toml."""
from setuptools import setup

setup()
