"""Pieces shared by every environment family: spaces, tokenization, datapools, rewards, embedded models."""
