"""The local backend: a generated network run as real processes on this machine."""
