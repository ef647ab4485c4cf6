"""Telegram: Telethon API messages and Telegram Desktop exports."""
