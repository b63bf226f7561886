"""The plain lowering of a program to a graph of ops (lower.py), and what it shares with the rewrites."""
