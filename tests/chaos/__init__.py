"""Fault scenarios: nothing submitted is lost and nothing is judged twice, whatever breaks."""
